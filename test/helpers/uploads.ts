import { join } from 'node:path';
import type { Test } from 'tap';
import { LocalObjectStore, S3ObjectStore, type ObjectStore } from '../../node/files/index.ts';
import type { Running } from '../../bin/spawn.ts';
import type { client } from './http.ts';
import { requireService } from './services.ts';

type NodeClient = ReturnType<typeof client>;

/**
 * An upload of `bytes` into `chatId` asked for as `jwt`, its bytes PUT where the answer says, as
 * a browser or a backend would: the upload's id. Throws when either step is refused: the suites
 * that use it test what comes after.
 */
export async function putUpload(node: NodeClient, jwt: string, chatId: string, bytes: Uint8Array, name: string, type: string): Promise<string> {
  const created = await node.post(`/api/chats/${chatId}/uploads`, { name, size: bytes.length, type }, jwt);
  if (created.status !== 201) throw new Error(`upload of ${name} refused: ${created.text}`);
  const put = created.body.upload as { url: string; headers: Record<string, string> };
  const stored = await fetch(put.url, { method: 'PUT', headers: fetchHeaders(put.headers), body: new Uint8Array(bytes) });
  if (stored.status !== 200) throw new Error(`PUT of ${name} refused: ${stored.status} ${await stored.text()}`);
  return created.body.uploadId as string;
}

/**
 * A signed request's headers as fetch takes them: Content-Length left out, for fetch sets it from
 * the body (the same value). Given too, Node 20's fetch sends both joined ("N, N"), which undici 7's
 * dispatcher refuses once the process has loaded undici (the service, started in the test's
 * process, does), and the request fails before it is sent.
 */
export function fetchHeaders(signed: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(signed).filter(([k]) => k.toLowerCase() !== 'content-length'));
}

/** Whether a download URL answers 404 (its file deleted) within 15 s, asked every 250 ms. */
export async function fileGone(url: string): Promise<boolean> {
  for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
    const res = await fetch(url);
    await res.body?.cancel();
    if (res.status === 404) return true;
  }
  return false;
}

/** Finalizes an upload of the caller's: the node's answer. */
export function finalizeUpload(node: NodeClient, jwt: string, chatId: string, uploadId: string) {
  return node.post(`/api/chats/${chatId}/uploads/${uploadId}/finalize`, undefined, jwt);
}

/**
 * The object store a running service keeps its attachments in, opened in this process through the
 * ObjectStore interface, as another node would: the S3 bucket `env` names (ATTACHMENTS_STORE=s3),
 * else the service's own `DATA_DIR/files`. Closed by the caller.
 */
export function serviceFiles(svc: Running, env: Record<string, string>): Promise<ObjectStore> {
  if (env.ATTACHMENTS_STORE !== 's3') return LocalObjectStore.open({ dir: join(svc.dataDir, 'files'), publicUrl: () => svc.nodeUrl });
  return S3ObjectStore.open({ endpoint: env.S3_ENDPOINT!, bucket: env.S3_BUCKET!, region: env.S3_REGION ?? 'us-east-1', accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! });
}

/**
 * Runs `body` as a subtest on each object store: the embedded one, then the S3-compatible server
 * in bucket `bucket` (its env for startService given), a recorded skip without it (a failure with
 * CI=true: requireService).
 */
export async function onEachObjectStore(t: Test, bucket: string, body: (t: Test, env: Record<string, string>) => Promise<void>): Promise<void> {
  await t.test('embedded store', (t) => body(t, {}));
  const s3 = await requireService('objectstore', (line) => t.comment(line));
  if (!s3) {
    t.skip('S3-compatible store: not running (scripts/services.sh start objectstore)', () => undefined);
    return;
  }
  await t.test('S3-compatible store', (t) =>
    body(t, {
      ATTACHMENTS_STORE: 's3',
      S3_ENDPOINT: `http://${s3.host}:${s3.port}`,
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
    }),
  );
}
