/** The part of a logger the bus needs; a pino Logger fits. */
export interface BusLogger {
  warn(context: object, message: string): void;
}

/** Used when no logger is given: transport trouble must never be silent. */
export const stderrLogger: BusLogger = {
  warn: (context, message) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg: message, ...context })}\n`),
};

/**
 * A warning that can fire thousands of times a second (every publish while Redis is away): the
 * first is logged at once, then at most one per `intervalMs` carrying how many were suppressed.
 */
export function throttled(log: BusLogger, message: string, intervalMs = 5_000): (context: object) => void {
  let last = -Infinity;
  let suppressed = 0;
  return (context) => {
    const now = Date.now();
    if (now - last < intervalMs) {
      suppressed++;
      return;
    }
    log.warn(suppressed > 0 ? { ...context, suppressed } : context, message);
    last = now;
    suppressed = 0;
  };
}

export function errorContext(error: unknown): { err: { message: string; code?: unknown } } {
  if (error instanceof Error) return { err: { message: error.message, code: (error as { code?: unknown }).code } };
  return { err: { message: String(error) } };
}
