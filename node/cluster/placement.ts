import { BackendUnavailableError } from '../../common/index.ts';
import { ownerOf, type Membership, type NodeInfo } from '../bus/index.ts';
import type { ChatOpArgs, ChatOpName, ChatOpResult, ChatRouter } from '../chat/service.ts';
import { callNode, NodeUnreachableError } from './rpc.ts';

/**
 * Which node owns each chat: rendezvous hashing of `appId/chatId` over the live nodes, which every
 * node computes alike from the shared membership list, with no coordination. While the list is
 * unknown (at start, or with Redis down from the start) a node owns everything it is asked about.
 * Two nodes may briefly disagree while a change spreads (up to one membership poll): both may then
 * run an actor for the same chat, and the fenced writes of the message store keep seqs unique;
 * the loser's write fails, its actor reloads and its client retries.
 */
export class ChatPlacement {
  private live: readonly NodeInfo[] = [];
  private readonly byId = new Map<string, NodeInfo>();
  private readonly listeners = new Set<() => void>();
  private readonly stop: () => void;

  constructor(
    readonly selfId: string,
    readonly membership: Membership,
  ) {
    this.stop = membership.onChange((live) => {
      this.live = live;
      this.byId.clear();
      for (const n of live) this.byId.set(n.nodeId, n);
      for (const listener of this.listeners) listener();
    });
  }

  /** The owner of a chat, or undefined when it is this node. */
  owner(appId: string, chatId: string): NodeInfo | undefined {
    if (this.live.length === 0) return undefined;
    const id = ownerOf(`${appId}/${chatId}`, this.live.map((n) => n.nodeId));
    return id === undefined || id === this.selfId ? undefined : this.byId.get(id);
  }

  owns(appId: string, chatId: string): boolean {
    return this.owner(appId, chatId) === undefined;
  }

  nodes(): readonly NodeInfo[] {
    return this.live;
  }

  /** Called after every change of the live list. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.stop();
  }
}

export interface ClusterRouterOptions {
  /** How long a call keeps trying while its owner cannot be reached (a dead node leaves the list within one membership TTL). */
  failoverMs: number;
  secret: Buffer;
  /** Runs an operation on this node. */
  local: <K extends ChatOpName>(op: K, args: ChatOpArgs<K>) => Promise<ChatOpResult<K>>;
}

/** Runs each chat operation on the chat's owner: here, or forwarded over HTTP. */
export class ClusterRouter implements ChatRouter {
  constructor(
    private readonly placement: ChatPlacement,
    private readonly options: ClusterRouterOptions,
  ) {}

  async run<K extends ChatOpName>(appId: string, chatId: string, op: K, args: ChatOpArgs<K>): Promise<ChatOpResult<K>> {
    const deadline = Date.now() + this.options.failoverMs;
    for (;;) {
      const owner = this.placement.owner(appId, chatId);
      if (!owner) return this.options.local(op, args);
      try {
        return (await callNode(owner.url, this.options.secret, op, appId, chatId, args)) as ChatOpResult<K>;
      } catch (error) {
        if (!(error instanceof NodeUnreachableError)) throw error;
        // Nothing ran there. The node is dead or leaving: once the membership drops it, the chat
        // has a new owner; until then, try again.
        if (Date.now() >= deadline) throw new BackendUnavailableError(`node ${owner.nodeId}`, { cause: error });
        void this.placement.membership.refresh();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}
