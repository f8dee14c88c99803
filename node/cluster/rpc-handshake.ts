import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Mutual authentication of a node-to-node connection with the cluster key, on fresh nonces.
 *
 * Each side proves knowledge of the key by an HMAC-SHA256 over the transcript of this connection:
 * a label naming the protocol and the side that proves, the server's nonce, the client's nonce,
 * the server's node id and the client's node id (each length-prefixed, so no two transcripts
 * share bytes). Guarantees:
 * - a recorded `auth` is worthless on another connection: the server's nonce differs every time;
 * - a recorded `welcome` is worthless to a fake server: the client's nonce differs every time;
 * - one side's proof never passes for the other's (the label differs), so a proof cannot be
 *   reflected back to the side that made it.
 */

export const NONCE_BYTES = 32;

export const newNonce = (): Buffer => randomBytes(NONCE_BYTES);

export interface Transcript {
  serverId: string;
  serverNonce: Uint8Array;
  clientId: string;
  clientNonce: Uint8Array;
}

const LABEL = { client: 'chat-service node rpc v1: client proof', server: 'chat-service node rpc v1: server proof' } as const;

export function proof(secret: Buffer, by: 'client' | 'server', t: Transcript): Buffer {
  const mac = createHmac('sha256', secret);
  for (const part of [LABEL[by], t.serverNonce, t.clientNonce, t.serverId, t.clientId]) {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    const length = Buffer.allocUnsafe(4);
    length.writeUInt32BE(bytes.length, 0);
    mac.update(length).update(bytes);
  }
  return mac.digest();
}

/** Whether `given` is the proof `by` must make over `t`, compared in constant time. */
export function verifyProof(secret: Buffer, by: 'client' | 'server', t: Transcript, given: Uint8Array): boolean {
  const expected = proof(secret, by, t);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
