/**
 * What a bus routes: the events of one chat, the events addressed to one user, or cluster-wide
 * control messages (API-key revocations, node announcements).
 */
export type BusTopic = { kind: 'chat'; appId: string; chatId: string } | { kind: 'user'; appId: string; userId: string } | { kind: 'control' };

export type BusHandler = (payload: Uint8Array) => void;

/**
 * Routes events between the nodes of a cluster. It is a router, not a store: nothing is kept, and
 * no acknowledgement to a client depends on it; a client that misses an event repairs the gap from
 * history (events carry per-chat seq and rev).
 *
 * Guarantees:
 * - at most once: a publication reaches each other node that subscribes to its topic once, or not
 *   at all when the transport fails;
 * - order: publications of one node to one topic arrive at each node in the order published;
 * - interest: only nodes holding a subscription to the topic receive it, so a chat's event crosses
 *   the transport once per interested node, not once per recipient and not to every node;
 * - no echo: a node never receives its own publications (it has delivered them locally already).
 *
 * Subscriptions are reference counted: the node subscribes to the transport on the first local
 * handler of a topic and unsubscribes when the last one goes.
 */
export interface Bus {
  readonly nodeId: string;
  publish(topic: BusTopic, payload: Uint8Array): void;
  /** Adds a handler; returns the function that removes it. */
  subscribe(topic: BusTopic, handler: BusHandler): () => void;
  /** Resolves once every subscription made so far is in place: publications after it will arrive. */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The transport name of a topic: one channel per chat, per user, and one for control. */
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
