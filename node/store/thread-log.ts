import { seqOfMessageId } from './message-id.ts';
import type { MessageStore, StoredMessage } from './types.ts';

/**
 * A thread's replies are a message log of their own (README, "Threads"): stored under the key
 * `<chatId>:<parentId>` as a chat is under its id, so the message store's paging, replay,
 * idempotency keys and mention index serve replies as they serve chats (O(result) reads, bounded
 * partitions), and a reply's `seq` is its place in its thread. Chat ids are UUIDs, which hold no
 * `:`, so a log's key never names a chat.
 */
export const threadLogId = (chatId: string, parentId: string): string => `${chatId}:${parentId}`;

/** The chat a message log belongs to: itself for a chat, the chat of a thread's log. */
export const chatOfLog = (logId: string): string => {
  const at = logId.indexOf(':');
  return at < 0 ? logId : logId.slice(0, at);
};

/**
 * A reply kept in its thread, by its id alone, as stored: the id carries its parent's seq, so one
 * read of the parent and one of the reply. Undefined for any other id (a reply shown in the chat
 * is found by its id in the chat's log first: its id carries its seq there).
 */
export async function storedReply(messages: MessageStore, appId: string, chatId: string, id: string): Promise<StoredMessage | undefined> {
  const parentSeq = seqOfMessageId(id);
  if (parentSeq === undefined || parentSeq < 1) return undefined;
  const [parent] = await messages.afterSeq(appId, chatId, parentSeq - 1, 1);
  if (!parent || parent.seq !== parentSeq || parent.thread === undefined) return undefined;
  return messages.get(appId, threadLogId(chatId, parent.id), id);
}
