import type { HttpResponse } from 'uWebSockets.js';

export type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/**
 * Reads a request body while enforcing `limit` as bytes arrive, so an oversized upload is refused
 * without ever being held in memory. uWS neuters each chunk after the callback, hence the copy.
 */
export function readBody(res: HttpResponse, limit: number, isAborted: () => boolean): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    res.onData((chunk, isLast) => {
      if (settled) return;
      if (isAborted()) {
        settled = true;
        resolve({ kind: 'aborted' });
        return;
      }
      size += chunk.byteLength;
      if (size > limit) {
        settled = true;
        resolve({ kind: 'too-large' });
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (isLast) {
        settled = true;
        resolve({ kind: 'ok', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) });
      }
    });
  });
}
