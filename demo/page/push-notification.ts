/**
 * What the service worker shows for a push of the chat service (README, "Push notifications"):
 * the payload is `{type: 'message.new', chatId, messageId, seq, senderId, mentioned, senderName?,
 * chatName?, text?}`, every value a string, the names and text absent in private mode. Kept apart
 * from sw.ts so it can be read, and tested, without a browser.
 */
export interface PushNotification {
  title: string;
  options: {
    body: string;
    /** The chat: a newer message of the same chat replaces its notification instead of stacking. */
    tag: string | undefined;
    /** Replaced quietly, except for a mention, which alerts again. */
    renotify: boolean;
    data: { chatId: string | undefined };
  };
}

/** What a private-mode push (ids only) says: the worker has no session to fetch the message with. */
export const PRIVATE_BODY = 'Open the chat to read it.';

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The notification for a push payload (parsed JSON, or anything a push service handed over). */
export function notificationFor(payload: unknown): PushNotification {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  const chatId = text(p.chatId);
  const sender = text(p.senderName);
  const chat = text(p.chatName);
  // A direct chat has no name: its sender is the chat. A message with only files has no text.
  const title = sender && chat ? `${sender} in ${chat}` : (sender ?? 'New message');
  const mentioned = p.mentioned === 'true';
  const body = text(p.text) ?? (sender ? 'Sent a message.' : PRIVATE_BODY);
  // renotify needs a tag: without a chat id there is nothing to replace.
  return { title, options: { body, tag: chatId, renotify: mentioned && chatId !== undefined, data: { chatId } } };
}
