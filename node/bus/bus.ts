/**
 * What a bus routes: the events of one chat, the events addressed to one user, or cluster-wide
 * control messages (API-key revocations, node announcements; see control.ts).
 */
export type BusTopic = { kind: 'chat'; appId: string; chatId: string } | { kind: 'user'; appId: string; userId: string } | { kind: 'control' };

/**
 * A publication's body, passed through untouched: a string arrives as a string (a JSON frame can be
 * handed to uWS as text), bytes arrive as bytes (MessagePack). Handlers must not mutate it: every
 * handler of a node sees the same bytes.
 */
export type BusPayload = Uint8Array | string;

/** Called once per publication of another node; `origin` is the publishing node's id. */
export type BusHandler = (payload: BusPayload, origin: string) => void;

/** Counters since the bus was opened, for metrics and for tests that count what crossed. */
export interface BusStats {
  /** publish() calls handed to the transport. */
  published: number;
  /** Copies the transport delivered for this node's publications: one per subscribed node. */
  crossings: number;
  /** Frames that arrived from the transport, own echoes included. */
  received: number;
  /** Own publications that came back and were dropped. */
  echoesDropped: number;
  /**
   * Frames dropped because one at least as new from the same node on the same channel had
   * arrived: the backlog of a connection that was cut off and replaced, or a copy.
   */
  staleDropped: number;
  /** Frames of an unknown protocol version or shape, dropped. */
  malformed: number;
  /** Publications the transport refused (disconnected, closed); each is lost. */
  publishFailures: number;
  /** Handlers that threw; the other handlers of the same publication still ran. */
  handlerErrors: number;
}

/**
 * Routes events between the nodes of a cluster. It is a router, not a store: nothing is kept, and
 * no acknowledgement to a client depends on it; a client that misses an event repairs the gap from
 * history (events carry per-chat seq and rev).
 *
 * Guarantees:
 * - at most once: a publication reaches each other node subscribed to its topic once, or not at
 *   all (transport down or reconnecting; nothing is queued or re-sent, so nothing is duplicated);
 * - order: publications of one node to one topic reach every node in the order published. There is
 *   no order between topics, nor between publishers. Each publication carries a number that
 *   grows with every publication of its node, and a frame not newer than one already received
 *   from that node on that channel is dropped: a transport that delivers twice or late (a
 *   replaced connection's backlog) costs a gap, never a repeat or a reordering;
 * - interest: only nodes subscribed to a topic receive it. A chat's event crosses the transport
 *   once per node with local interest in that chat: not once per recipient, not to every node;
 * - no echo: a node never receives its own publications. The publishing node delivers to its own
 *   sockets itself (synchronously, before publishing), so local delivery never waits for the
 *   transport and survives its outages. The envelope names the origin node; a transport that
 *   echoes (Redis, when the publisher is itself subscribed) has the echo dropped on arrival;
 * - handlers run one at a time, never re-entrantly, and never inside publish(). A throwing
 *   handler is logged and counted; it does not stop the others.
 *
 * Subscriptions are reference counted per topic: the node subscribes at the transport with the
 * first local handler and unsubscribes with the last, so the transport's interest follows local
 * sockets. Publications before a subscription is in place (see ready()) may be missed.
 *
 * Nothing throws: transport errors are logged and counted, and the transport reconnects and
 * re-subscribes by itself.
 */
export interface Bus {
  readonly nodeId: string;
  publish(topic: BusTopic, payload: BusPayload): void;
  /** Adds a handler; returns a function that removes exactly this subscription (idempotent). */
  subscribe(topic: BusTopic, handler: BusHandler): () => void;
  /** Removes one subscription of `handler` to `topic`, if there is one. */
  unsubscribe(topic: BusTopic, handler: BusHandler): void;
  /**
   * Resolves once every subscribe and unsubscribe made so far is in effect at the transport and
   * every publication made so far has been handed over; rejects when the transport is down.
   */
  ready(): Promise<void>;
  stats(): Readonly<BusStats>;
  /** Unsubscribes everything and releases the transport; publish and subscribe then do nothing. */
  close(): Promise<void>;
}

/**
 * The transport name of a topic: one channel per chat, per user, and one for control. Ids are
 * UUIDs; an app id never contains ':', which keeps names unambiguous (the last part is free).
 */
export function channelOf(prefix: string, topic: BusTopic): string {
  switch (topic.kind) {
    case 'chat':
      return `${prefix}c:${topic.appId}:${topic.chatId}`;
    case 'user':
      return `${prefix}u:${topic.appId}:${topic.userId}`;
    case 'control':
      return `${prefix}control`;
    default:
      return topic satisfies never;
  }
}

export const emptyStats = (): BusStats => ({
  published: 0,
  crossings: 0,
  received: 0,
  echoesDropped: 0,
  staleDropped: 0,
  malformed: 0,
  publishFailures: 0,
  handlerErrors: 0,
});
