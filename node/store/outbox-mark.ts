import { eventTime } from '../../common/webhooks/ids.ts';

/**
 * How far above an owner's low-water mark a finished (or partly done) event may go unrecorded
 * (WebhookOutbox.progress): in the steady state every event finishes this close to the mark, and
 * the next mark covers it, so recording it would cost a write per event. A crash can resend those
 * (at least once); events further above, held up behind one a failing endpoint holds back, are
 * recorded, so a recovery does not resend them.
 */
export const MARK_SLACK_MS = 5_000;

/** Whether progress may leave event `id` unrecorded under mark `low` (none: everything is recorded). */
export function coveredByMark(low: string | undefined): (id: string) => boolean {
  if (low === undefined) return () => false;
  const lowMs = eventTime(low);
  return (id) => id < low || eventTime(id) - lowMs < MARK_SLACK_MS;
}
