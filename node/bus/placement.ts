import { createHash } from 'node:crypto';

/** A 64-bit weight of (key, node) from SHA-256: stable across processes and versions. */
function weight(key: string, nodeId: string): bigint {
  return createHash('sha256').update(key).update('\u0000').update(nodeId).digest().readBigUInt64BE(0);
}

/**
 * The node that owns `key` (a chat) among the live nodes: rendezvous (highest random weight)
 * hashing. Every node computes the same owner from the same list, with no coordination; when a
 * node leaves, only its keys move, spread over the others; when one joins, it takes about 1/N.
 */
export function ownerOf(key: string, nodeIds: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const nodeId of nodeIds) {
    const w = weight(key, nodeId);
    if (w > bestWeight || (w === bestWeight && best !== undefined && nodeId < best)) {
      best = nodeId;
      bestWeight = w;
    }
  }
  return best;
}
