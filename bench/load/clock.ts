/**
 * Milliseconds since the epoch with sub-millisecond resolution, comparable between the generator's
 * processes on one machine: each one's performance.timeOrigin is read from the same system clock
 * at its start, then advanced by the monotonic clock.
 */
export const now = (): number => performance.timeOrigin + performance.now();
