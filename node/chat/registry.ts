import { ChatActor, type ActorDeps } from './actor.ts';

export interface RegistryOptions {
  /** An actor with nothing pending and unused this long is evicted. */
  idleMs: number;
}

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
      if (actor.gone || actor.broken || (actor.idle && now - actor.lastUsed > this.options.idleMs)) this.actors.delete(key);
    }
  }

  /** Waits for every actor's pending writes (graceful shutdown). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.actors.values()].map((a) => a.drain()));
  }

  close(): void {
    clearInterval(this.timer);
  }
}
