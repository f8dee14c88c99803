import { ChatActor, type ActorDeps } from './actor.ts';

export interface RegistryOptions {
  /** An actor with nothing pending and unused this long is evicted. */
  idleMs: number;
  /** In a cluster: an idle actor of a chat owned elsewhere (loaded for a caller with an older node list) is dropped by the sweep. */
  owns?: (appId: string, chatId: string) => boolean;
}

/** Whether this node owns a chat (in a cluster); an actor of a chat owned elsewhere is dropped. */
export type Ownership = (appId: string, chatId: string) => boolean;

/**
 * The chat actors of this node, created on first use and evicted when idle. Loading is
 * single-flight: concurrent first operations on a chat share one actor.
 */
export class ActorRegistry {
  private readonly actors = new Map<string, ChatActor>();
  private readonly loading = new Map<string, Promise<ChatActor | undefined>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly deps: ActorDeps,
    private readonly options: RegistryOptions,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.max(1000, options.idleMs / 2));
    this.timer.unref();
  }

  get size(): number {
    return this.actors.size;
  }

  /** The chat's actor, or undefined when the chat does not exist in this application. */
  async get(appId: string, chatId: string): Promise<ChatActor | undefined> {
    const key = `${appId}/${chatId}`;
    const existing = this.actors.get(key);
    if (existing && !existing.broken && !existing.gone) return existing;
    if (existing) this.actors.delete(key);
    let pending = this.loading.get(key);
    if (!pending) {
      pending = (async () => {
        const actor = new ChatActor(appId, chatId, this.deps);
        try {
          if (!(await actor.load())) return undefined;
          this.actors.set(key, actor);
          return actor;
        } finally {
          this.loading.delete(key);
        }
      })();
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** The actor if it is loaded, without loading it. */
  peek(appId: string, chatId: string): ChatActor | undefined {
    return this.actors.get(`${appId}/${chatId}`);
  }

  sweep(now = Date.now()): void {
    for (const [key, actor] of this.actors) {
      const unowned = this.options.owns !== undefined && !this.options.owns(actor.appId, actor.chatId);
      if (actor.gone || actor.broken || (actor.idle && (unowned || now - actor.lastUsed > this.options.idleMs))) this.actors.delete(key);
    }
  }

  /**
   * Drops the actors of chats this node no longer owns (the live node list changed), so the new
   * owner's actor is the only one writing and, should the chat come back here, it is reloaded
   * rather than served from a stale cache. Operations already queued on a dropped actor still run;
   * its fenced writes fail if the new owner wrote first.
   */
  dropUnowned(owns: Ownership): number {
    let dropped = 0;
    for (const [key, actor] of this.actors) {
      if (owns(actor.appId, actor.chatId)) continue;
      this.actors.delete(key);
      dropped++;
    }
    return dropped;
  }

  /** Waits for every actor's pending writes (graceful shutdown). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.actors.values()].map((a) => a.drain()));
  }

  close(): void {
    clearInterval(this.timer);
  }
}
