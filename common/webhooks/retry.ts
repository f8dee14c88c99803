/**
 * When a failed delivery is tried again (README, "Webhooks"): 1 s after the first failure, then
 * doubling (2 s, 4 s, 8 s …) up to every 10 minutes, each delay moved by up to ±20 % at random so
 * that events failed together do not come back together. An event is given up 24 hours after it
 * was made. A short outage therefore heals in about as long as it lasted.
 */
export const RETRY_SCHEDULE = Object.freeze({ firstMs: 1_000, capMs: 10 * 60_000, jitter: 0.2, giveUpMs: 24 * 3600_000 });

/** The wait before attempt `failures + 1`, after `failures` failed attempts (≥ 1). */
export function retryDelay(failures: number, random: () => number = Math.random): number {
  const base = Math.min(RETRY_SCHEDULE.capMs, RETRY_SCHEDULE.firstMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(base * (1 - RETRY_SCHEDULE.jitter + 2 * RETRY_SCHEDULE.jitter * random()));
}
