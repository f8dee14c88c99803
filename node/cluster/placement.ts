import { BackendUnavailableError } from '../../common/index.ts';
import { ownerOf, type Membership, type NodeInfo } from '../bus/index.ts';
import type { ChatOpArgs, ChatOpName, ChatOpResult, ChatRouter } from '../chat/index.ts';
import { FencedError, type WriterId } from '../store/index.ts';
import { HeldElsewhereError, NodeUnreachableError } from './rpc.ts';
import type { RpcCaller } from './rpc-client.ts';

/** Chats whose owner is kept at most, for the current node list. */
const OWNER_CACHE = 100_000;

/**
 * Which node owns each chat: rendezvous hashing of `appId/chatId` over the live nodes, which every
 * node computes alike from the shared membership list, with no coordination. While the list is
 * unknown (at start, or with Redis down from the start) a node owns everything it is asked about.
 * Two nodes may briefly disagree while a change spreads (up to one membership poll): both may then
 * run an actor for the same chat; the store's holds let only one of them write it (ChatWriters),
 * the other's fenced writes are refused naming the holder, and the router forwards there.
 */
export class ChatPlacement {
  private live: readonly NodeInfo[] = [];
  private liveIds: readonly string[] = [];
  private readonly byId = new Map<string, NodeInfo>();
  /** Owners computed for the current list (a hash per node per chat is worth keeping): cleared on every change. */
  private readonly owners = new Map<string, string | undefined>();
  private readonly listeners = new Set<() => void>();
  private readonly stop: () => void;

  constructor(
    readonly selfId: string,
    readonly membership: Membership,
  ) {
    this.stop = membership.onChange((live) => {
      this.live = live;
      this.liveIds = live.map((n) => n.nodeId);
      this.owners.clear();
      this.byId.clear();
      for (const n of live) this.byId.set(n.nodeId, n);
      for (const listener of this.listeners) listener();
    });
  }

  /** The owner of a chat, or undefined when it is this node. */
  owner(appId: string, chatId: string): NodeInfo | undefined {
    if (this.live.length === 0) return undefined;
    const key = `${appId}/${chatId}`;
    let id = this.owners.get(key);
    if (id === undefined && !this.owners.has(key)) {
      id = ownerOf(key, this.liveIds);
      if (this.owners.size >= OWNER_CACHE) this.owners.clear();
      this.owners.set(key, id);
    }
    return id === undefined || id === this.selfId ? undefined : this.byId.get(id);
  }

  /** The chat's owner as a writer of the store names it (its id and node-to-node address), or undefined when it is this node. */
  placedElsewhere(appId: string, chatId: string): WriterId | undefined {
    const owner = this.owner(appId, chatId);
    return owner && { id: owner.nodeId, address: owner.rpc };
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
  /** The node-to-node connections (an RpcClient). */
  rpc: RpcCaller;
  /** Runs an operation on this node. */
  local: <K extends ChatOpName>(op: K, args: ChatOpArgs<K>) => Promise<ChatOpResult<K>>;
}

/** A node a call may go to: its id (for messages) and node-to-node address. */
interface Destination {
  nodeId: string;
  address: string;
}

/** How many times one operation follows "another node holds the chat" before giving up (ownership is moving). */
const MAX_REDIRECTS = 4;

/**
 * Runs each chat operation on the node that writes the chat: by placement, the chat's owner
 * (here, or forwarded to its node-to-node address over the connection the RpcClient keeps to it);
 * but the store has the last word. When the node tried finds that another node holds the chat
 * (two nodes briefly disagree about the node list, or a chat is still held by its previous owner),
 * nothing ran there and the operation follows to the holder, a few times at most; so it does when
 * the node tried places the chat on another node (it takes no chat placed elsewhere). A holder that
 * cannot be reached (it crashed) is tried again until its hold times out, within `failoverMs`.
 */
export class ClusterRouter implements ChatRouter {
  constructor(
    private readonly placement: ChatPlacement,
    private readonly options: ClusterRouterOptions,
  ) {}

  async run<K extends ChatOpName>(appId: string, chatId: string, op: K, args: ChatOpArgs<K>): Promise<ChatOpResult<K>> {
    const deadline = Date.now() + this.options.failoverMs;
    let redirect: Destination | undefined;
    let redirects = 0;
    for (;;) {
      const owner = this.placement.owner(appId, chatId);
      const to: Destination | undefined = redirect ?? (owner ? { nodeId: owner.nodeId, address: owner.rpc } : undefined);
      try {
        if (!to || to.nodeId === this.placement.selfId) return await this.options.local(op, args);
        return (await this.options.rpc.call(to.address, op, appId, chatId, args)) as ChatOpResult<K>;
      } catch (error) {
        const holder = error instanceof FencedError || error instanceof HeldElsewhereError ? error.holder : undefined;
        if (holder?.address && holder.id !== this.placement.selfId && redirects < MAX_REDIRECTS) {
          redirect = { nodeId: holder.id, address: holder.address };
          redirects++;
          continue;
        }
        if (holder || error instanceof NodeUnreachableError) {
          // Nothing ran. The node is dead or leaving, or the chat is between holders: once the
          // membership drops a dead node (or its hold times out), the chat has a writer again.
          if (Date.now() >= deadline) throw new BackendUnavailableError(`chat ${chatId} (${to ? `node ${to.nodeId}` : 'moving between nodes'})`, { cause: error });
          redirect = undefined;
          void this.placement.membership.refresh();
          await new Promise((resolve) => setTimeout(resolve, 200));
          continue;
        }
        throw error;
      }
    }
  }
}
