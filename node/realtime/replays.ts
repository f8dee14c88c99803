import type { Replay, ReplayDelivery, ReplayTarget } from '../chat/index.ts';

/** Receives the replay of one chat for one waiting socket; runs synchronously in delivery order. */
export type ReplayWaiter = (replay: Replay) => void;

/**
 * Where resuming sockets wait for their replays and where chat owners hand them over. Standalone
 * (LocalReplays) every replay is for this node; in a cluster (ClusterEvents) a replay for a socket
 * of another node crosses the bus on the chat's topic.
 */
export interface Replays {
  readonly nodeId: string;
  /** Registers `waiter` for the socket `connId` in the chat; returns the function that ends the wait. */
  wait(appId: string, chatId: string, connId: string, waiter: ReplayWaiter): () => void;
  /** Resolves when a replay published now would reach this node (the bus subscription is in place). */
  ready(): Promise<void>;
  deliver: ReplayDelivery;
}

/** The waiting sockets of this node, by connection and chat. */
export class ReplayWaiters {
  private readonly waiters = new Map<string, ReplayWaiter>();

  add(chatId: string, connId: string, waiter: ReplayWaiter): () => void {
    const key = `${connId}/${chatId}`;
    this.waiters.set(key, waiter);
    return () => {
      if (this.waiters.get(key) === waiter) this.waiters.delete(key);
    };
  }

  deliver(chatId: string, to: ReplayTarget, replay: Replay): void {
    this.waiters.get(`${to.connId}/${chatId}`)?.(replay);
  }
}

export class LocalReplays implements Replays {
  private readonly waiters = new ReplayWaiters();
  constructor(readonly nodeId: string) {}
  wait(_appId: string, chatId: string, connId: string, waiter: ReplayWaiter): () => void {
    return this.waiters.add(chatId, connId, waiter);
  }
  ready(): Promise<void> {
    return Promise.resolve();
  }
  deliver: ReplayDelivery = (_appId, chatId, to, replay) => this.waiters.deliver(chatId, to, replay);
}
