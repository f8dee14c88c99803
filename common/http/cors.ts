/** Allowed browser origins: a list, or `*` for any. Credentials are bearer tokens, never cookies. */
export interface CorsPolicy {
  origins: readonly string[] | '*';
}

export const ALLOWED_REQUEST_HEADERS = 'authorization, content-type, idempotency-key';

export function allowOrigin(policy: CorsPolicy, origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  if (policy.origins === '*') return '*';
  return policy.origins.includes(origin) ? origin : undefined;
}

export function parseOrigins(value: string): readonly string[] | '*' {
  const trimmed = value.trim();
  if (trimmed === '*') return '*';
  return Object.freeze(
    trimmed
      .split(',')
      .map((s) => s.trim().replace(/\/$/, ''))
      .filter(Boolean),
  );
}
