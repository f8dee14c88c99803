/** What a node announces about itself. */
export interface NodeDetails {
  /** The node's HTTP and WebSocket URL (informational: for operators and tools). */
  url: string;
  /** `host:port` of the node's node-to-node listener, where the other nodes forward chat operations. */
  rpc: string;
  /** The node's software version, so a rolling upgrade is visible. */
  version: string;
}

export interface NodeInfo extends NodeDetails {
  nodeId: string;
  /** When the node joined, by its own clock (informational: ordering never depends on it). */
  joinedAt: string;
}

/** Called with the full live list, ordered by nodeId, whenever the set of live node ids changes. */
export type MembershipListener = (live: readonly NodeInfo[]) => void;

/**
 * The live nodes of a cluster: each node joins, renews its entry by heartbeat, and leaves on a
 * graceful shutdown. A node that stops heartbeating (crash, partition, a stopped event loop) drops
 * out of live() one TTL after its last heartbeat, and out of every onChange() listener's list
 * within one TTL plus one poll.
 *
 * Guarantees:
 * - live() reads the shared store: every node sees the same list, up to in-flight changes;
 *   placement (ownerOf) over that list agrees across nodes once the list has settled;
 * - onChange() listeners hear of each change of the set of live node ids once, in order, with the
 *   whole new list (never a diff, so a missed poll cannot desynchronize a listener); a new
 *   listener first hears the current list, on the next read;
 * - heartbeat and poll failures are logged, never thrown; a node that cannot reach the store keeps
 *   its last known list (it cannot tell who else is alive) and drops out of the others' lists.
 */
export interface Membership {
  /**
   * Announces this node and starts heartbeating; resolves after the first write. If that write
   * fails it rejects, and the heartbeat keeps trying: the node appears once a beat lands.
   */
  join(nodeId: string, details: NodeDetails): Promise<void>;
  live(): Promise<NodeInfo[]>;
  /** Adds a listener; returns the function that removes it. */
  onChange(listener: MembershipListener): () => void;
  /** Reads the live list now and notifies listeners if it changed (on a `node.leaving` message). */
  refresh(): Promise<void>;
  /** Stops heartbeating and removes this node's entry at once, so others re-place its chats now. */
  leave(): Promise<void>;
  /** leave(), then stop polling. */
  close(): Promise<void>;
}
