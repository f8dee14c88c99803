/**
 * Webhook events on their way out: made with the change they report, durable with it. What every
 * store interface promises: ../types.ts.
 */

/**
 * A webhook event in the outbox of the node that made it (its `owner`): the delivery body is made
 * once, when the change is written, so a retry days later sends the same bytes.
 */
export interface OutboxEvent {
  /** `evt_…`: ordered by creation within its owner; the `webhook-id` every retry carries. */
  id: string;
  appId: string;
  type: string;
  /** The delivery body, `{type, id, timestamp, appId, data}`, as sent. */
  body: string;
  /**
   * For an event written before its change (see MessageStore.put, EventOptions): the change it
   * reports. A recovery sends an event still carrying one only if `changeLanded` finds the change.
   */
  check?: ChangeCheck;
}

/**
 * What a recovery looks for before sending an event written ahead of its change (see
 * changeLanded): a message at this revision or later (message events; the only kind of check
 * without a `kind`, as events written before the other kinds existed carry it); a chat, member
 * or user present or absent (a chat also updated at `updatedAt` or later; a user also holding
 * `username`, which a create claims after writing the user's row).
 */
export type ChangeCheck =
  | { kind?: undefined; chatId: string; messageId: string; rev: number }
  | { kind: 'chat'; chatId: string; present: boolean; updatedAt?: string }
  | { kind: 'member'; chatId: string; userId: string; present: boolean }
  | { kind: 'user'; userId: string; present: boolean; username?: string };

/** An outbox event not yet finished, with the endpoints that are done with it. */
export interface PendingEvent {
  event: OutboxEvent;
  done: string[];
}

/**
 * Each node's outbox of webhook events. An owner appends events with the change they report (see
 * EventOptions and MessageStore.put; presence events, which report no stored change, on their
 * own) and its dispatcher finishes them; when the owner
 * dies, another node adopts its outbox and finishes what is left. Delivery is at least once: an
 * event is finished only after every endpoint is done with it, so a crash at any point resends.
 */
export interface WebhookOutbox {
  /** Makes events durable in `owner`'s outbox. */
  append(owner: string, events: OutboxEvent[]): Promise<void>;
  /**
   * Unfinished events of `owner` with id ≥ `from` (from the owner's low-water mark without it),
   * oldest first, at most `limit`.
   */
  pending(owner: string, from: string | undefined, limit: number): Promise<PendingEvent[]>;
  /**
   * Records progress: `finished` events are not returned again; `partial` ones keep their done
   * endpoints; `low`, when given, says every event of the owner with a smaller id is finished. A
   * store may skip recording events (finished or partial) a few seconds above `low` at most,
   * which the next `low` covers: they may come back once after a crash (delivery is at least once).
   */
  progress(owner: string, finished: string[], partial: PendingEvent[], low?: string): Promise<void>;
  /**
   * The changes of these events (appended with a check, before them) applied: they are sent
   * without checking from now on. Ids not in the outbox (or carrying no check) are ignored.
   */
  confirm(owner: string, ids: string[]): Promise<void>;
  /** Owners whose outbox may hold unfinished events. */
  owners(): Promise<string[]>;
  /** Forgets an owner whose outbox is finished and who will append no more (a node gone for good). */
  retire(owner: string): Promise<void>;
}
