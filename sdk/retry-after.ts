/** A wait the service asked for, in whole seconds (a `Retry-After` or `retryAfter` value), in ms. */
export function retryAfterMsOf(seconds: unknown): number | undefined {
  const n = typeof seconds === 'string' && /^\d{1,9}$/.test(seconds.trim()) ? Number(seconds) : seconds;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n * 1000 : undefined;
}
