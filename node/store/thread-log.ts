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
