import type { ApnsNotification } from './apns.ts';
import type { FcmNotification } from './fcm.ts';
import { chatTopic, type WebPushMessage } from './web-push-request.ts';

/** What a push tells one recipient of a new message (README, "Push notifications"). */
export interface PushContent {
  chatId: string;
  messageId: string;
  seq: number;
  senderId: string;
  /** The sender's display name (their id when they have none). */
  senderName: string;
  /** The group's name; absent for a direct chat. */
  chatName?: string;
  text: string;
  /** A thread reply: its parent. */
  parentId?: string;
  /** The recipient is mentioned. */
  mentioned: boolean;
  /** When the message was sent (ms): a push outlives it by TTL_SECONDS at most. */
  sentAtMs: number;
}

/** How long the push services keep a push for a device that is away, and how long it is retried. */
export const PUSH_TTL_SECONDS = 4 * 3600;
/** Characters of the message a push carries at most (the services take about 4 KB). */
const TEXT_MAX = 500;

const shortText = (text: string) => (text.length <= TEXT_MAX ? text : `${Array.from(text.slice(0, TEXT_MAX * 2)).slice(0, TEXT_MAX).join('')}…`);
const ttlLeft = (c: PushContent, nowMs: number) => Math.max(0, Math.round(PUSH_TTL_SECONDS - (nowMs - c.sentAtMs) / 1000));

/**
 * The data a push carries, the same for every provider: ids only in private mode (the app fetches
 * the message with its own token), else the sender's name and the text (cut to 500 characters) too.
 */
export function pushData(c: PushContent, privateMode: boolean): Record<string, string> {
  const ids: Record<string, string> = { type: 'message.new', chatId: c.chatId, messageId: c.messageId, seq: String(c.seq), senderId: c.senderId, mentioned: String(c.mentioned) };
  if (c.parentId) ids.parentId = c.parentId;
  if (privateMode) return ids;
  return { ...ids, senderName: c.senderName, ...(c.chatName ? { chatName: c.chatName } : {}), text: shortText(c.text) };
}

const title = (c: PushContent) => (c.chatName ? `${c.senderName} in ${c.chatName}` : c.senderName);

/** RFC 8030's urgency for a chat message is `normal`; a mention is `high`, as is a time-sensitive alert. */
export function webPushMessage(c: PushContent, privateMode: boolean, nowMs = Date.now()): WebPushMessage {
  return { payload: JSON.stringify(pushData(c, privateMode)), ttlSeconds: ttlLeft(c, nowMs), urgency: c.mentioned ? 'high' : 'normal', topic: chatTopic(c.chatId) };
}

export function apnsNotification(c: PushContent, privateMode: boolean, nowMs = Date.now()): ApnsNotification {
  // Private mode: a generic alert the app's notification service extension may replace once it has fetched the message.
  const alert = privateMode ? { title: 'New message' } : { title: title(c), body: shortText(c.text) };
  return {
    payload: { aps: { alert, sound: 'default', 'thread-id': c.chatId, 'mutable-content': 1 }, chat: pushData(c, privateMode) },
    collapseId: chatTopic(c.chatId),
    expiration: Math.floor(nowMs / 1000) + ttlLeft(c, nowMs),
    priority: 10,
  };
}

export function fcmNotification(c: PushContent, privateMode: boolean, nowMs = Date.now()): FcmNotification {
  return {
    data: pushData(c, privateMode),
    ...(privateMode ? {} : { notification: { title: title(c), body: shortText(c.text) } }),
    collapseKey: chatTopic(c.chatId),
    ttlSeconds: ttlLeft(c, nowMs),
    // FCM's advice for a message the user sees at once: high.
    priority: 'high',
  };
}
