import type { HeadFence, StoredMessage } from './types.ts';

/**
 * The last state of each message of a put, in the order the messages first appear: a message
 * created and changed in one batch is written once, so no superseded revision gets an index row.
 */
export function latestOfEach(messages: StoredMessage[]): StoredMessage[] {
  return [...new Map(messages.map((m) => [`${m.appId}\u0000${m.chatId}\u0000${m.id}`, m])).values()];
}

/**
 * Whether a fenced put is this message's first write: its seq was assigned after the head the fence
 * moves from, so there is no earlier revision to read or index row to delete. Unfenced: unknown.
 */
export const neverWritten = (m: StoredMessage, fence: HeadFence | undefined): boolean => fence !== undefined && m.seq > fence.from.seq;
