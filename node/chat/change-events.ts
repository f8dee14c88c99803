import type { ChangeCheck, OutboxEvent, StoredMessage } from '../store/index.ts';
import type { ChatEvent } from './events.ts';
import type { MessageView } from './views.ts';

/*
 * The port through which chat reports its changes as webhook events: chat declares it, as it does
 * EventSink, and node/webhooks implements it (NodeWebhooks) from above, so the arrows point from
 * the consumers to the core.
 */

/** A message write as the chat actor hands it to messageEvents. */
export interface MessageWrite {
  message: StoredMessage;
  event: ChatEvent & { rev: number };
}

/** What the chat actor and the routes call to make webhook events (see NodeWebhooks). */
export interface ChatWebhooks {
  /**
   * The events of a batch of message writes, made before the write (none when nobody listens).
   * A message's JSON comes from messageJson (message-json.ts), made once for every sender.
   */
  messageEvents(appId: string, writes: readonly MessageWrite[]): OutboxEvent[] | Promise<OutboxEvent[]>;
  /** The put that carried `events` resolved (ok) or failed. */
  written(events: OutboxEvent[], ok: boolean): void;
  /** The events of a change about to be written with them (EventOptions); see changeWithEvents. */
  prepare(appId: string, items: ChangeEventItem[]): Promise<OutboxEvent[]>;
  /** Events not made by a store write (presence, `message.unread`): resolves once they are durable. */
  emit(appId: string, items: { type: string; data: unknown }[]): Promise<void>;
  /**
   * New messages of a chat are durable: members with no live connection get `message.unread`.
   * `members`: the chat's now, by user id (read at once, not kept).
   */
  stored(appId: string, chatId: string, messages: MessageView[], members: ReadonlyMap<string, unknown>): void;
}

/** An event a chat, member or user change reports, with what a recovery checks (OutboxEvent.check). */
export interface ChangeEventItem {
  type: string;
  data: unknown;
  check: ChangeCheck;
}

/**
 * Runs a store write of a chat, member or user change with the events it reports (EventOptions):
 * they are in the outbox once the write resolves with its change applied (`applied`), and never
 * delivered when it is not (or it throws). Without webhooks, or with nobody subscribed, the write
 * runs alone.
 */
export async function changeWithEvents<T>(webhooks: ChatWebhooks | undefined, appId: string, items: ChangeEventItem[], write: (events: OutboxEvent[] | undefined) => Promise<T>, applied: (result: T) => boolean): Promise<T> {
  const events = webhooks ? await webhooks.prepare(appId, items) : [];
  if (events.length === 0) return write(undefined);
  let result: T;
  try {
    result = await write(events);
  } catch (error) {
    webhooks!.written(events, false);
    throw error;
  }
  webhooks!.written(events, applied(result));
  return result;
}
