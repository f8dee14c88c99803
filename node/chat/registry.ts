import { FencedError, type WriterId } from '../store/index.ts';
import { ChatActor, type ActorDeps } from './actor.ts';
import type { AttachmentPort } from './attachment-port.ts';

export interface RegistryOptions {
  /** An actor with nothing pending and unused this long is evicted. */
  idleMs: number;
  /**
   * In a cluster: the node a chat is placed on when that is not this node (undefined when it is
   * this one, or while the node list is unknown). A chat placed elsewhere gets no actor here.
   */
  placedElsewhere?: (appId: string, chatId: string) => WriterId | undefined;
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

  /** The attachments the actors claim files from (ActorDeps), read before a send reaches its actor. */
  get attachments(): AttachmentPort | undefined {
    return this.deps.attachments;
  }

  /**
   * The chat's actor, or undefined when the chat does not exist in this application. Throws
   * FencedError naming the chat's node when the node list places it on another one: only the
   * node it is placed on takes a chat. Otherwise, under steady load, a node that held the chat
   * before the list changed takes it back each time it hands it over (the operations the new
   * owner's fenced writes send here bring its actor back), and the owner's writes keep being
   * refused. An actor still here for such a chat is evicted: its queued operations still run,
   * then the chat is handed back, and the owner takes it at its next write.
   */
  async get(appId: string, chatId: string): Promise<ChatActor | undefined> {
    const key = `${appId}/${chatId}`;
    const existing = this.actors.get(key);
    const placed = this.options.placedElsewhere?.(appId, chatId);
    if (placed) {
      if (existing) this.evict(key, existing);
      throw new FencedError(appId, chatId, { seq: 0, rev: 0 }, placed);
    }
    if (existing?.status === 'live') return existing;
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

  /**
   * Evicts actors unused for `idleMs`, and actors of chats placed on another node even while busy
   * (the node list changed with nothing asked of them since), so the owner takes those chats.
   */
  sweep(now = Date.now()): void {
    for (const [key, actor] of this.actors) {
      const unowned = this.options.placedElsewhere?.(actor.appId, actor.chatId) !== undefined;
      if (actor.status !== 'live') this.actors.delete(key);
      else if (unowned || (actor.idle && now - actor.lastUsed > this.options.idleMs)) this.evict(key, actor);
    }
  }

  /**
   * Drops an actor and, once its writes have settled, hands its chat back (ChatWriters.release), so
   * the next node to write the chat does not wait for this one's hold to time out. An actor made
   * for the chat meanwhile (it is placed here again) takes the chat again with its next write if
   * it is still free, or finds its new holder.
   */
  private evict(key: string, actor: ChatActor): void {
    this.actors.delete(key);
    void actor
      .drain()
      .then(() => this.deps.store.writers.release(actor.appId, actor.chatId))
      .catch(() => undefined);
  }

  /**
   * Drops the actors of chats this node no longer owns (the live node list changed) and hands the
   * chats back once their writes have settled, so the new owner takes them at once; should a chat
   * come back here, it is reloaded rather than served from a stale cache. Operations already queued
   * on a dropped actor still run; their fenced writes are refused once the new owner holds the chat.
   */
  dropUnowned(owns: Ownership): number {
    let dropped = 0;
    for (const [key, actor] of this.actors) {
      if (owns(actor.appId, actor.chatId)) continue;
      this.evict(key, actor);
      dropped++;
    }
    return dropped;
  }

  /** Waits for every actor's pending writes, then hands every chat back (graceful shutdown). */
  async flushAll(): Promise<void> {
    const actors = [...this.actors.values()];
    await Promise.all(actors.map((a) => a.drain()));
    await Promise.all(actors.map((a) => this.deps.store.writers.release(a.appId, a.chatId).catch(() => undefined)));
  }

  close(): void {
    clearInterval(this.timer);
  }
}
