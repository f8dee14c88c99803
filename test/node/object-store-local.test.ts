import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import uws from 'uWebSockets.js';
import { listen } from '../../common/http/index.ts';
import { LocalObjectStore, serveLocalFiles } from '../../node/files/index.ts';
import { objectStoreConformance, testRoot } from './object-store-conformance.ts';

/**
 * Serves a local store's signed URLs through the node's own uWS route (serveLocalFiles), so the
 * suite checks the transport the node runs; `store()` is read at each request (tests reopen it).
 */
async function serve(store: () => LocalObjectStore): Promise<{ close: () => void; url: string }> {
  const app = uws.App();
  // The route takes a store; one that forwards to the current one lets the tests swap it.
  const current = new Proxy({} as LocalObjectStore, { get: (_, name) => Reflect.get(store(), name).bind(store()) });
  serveLocalFiles(app, current, { origins: '*' });
  const listening = await listen(app, '127.0.0.1', 0);
  return { close: () => listening.close(), url: `http://127.0.0.1:${listening.port}` };
}

const dir = mkdtempSync(join(tmpdir(), 'object-store-local-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let current: LocalObjectStore | undefined;
const { close, url } = await serve(() => current!);
t.teardown(close);

objectStoreConformance(t, 'local', async () => {
  current = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  return { store: current, root: testRoot(), close: () => current!.close() };
});

t.test('local: objects and the signing key are private to the owner; no temporary file stays behind', async (t) => {
  const store = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  current = store;
  const root = testRoot();
  await store.put(`${root}/a.bin`, Buffer.from('x'), 'application/octet-stream');
  t.equal(statSync(join(dir, 'files', root, 'a.bin')).mode & 0o777, 0o600);
  t.equal(statSync(join(dir, 'files', '.signing-key')).mode & 0o777, 0o600);
  t.equal(statSync(join(dir, 'files')).mode & 0o777, 0o700);
  const req = await store.presignPut(`${root}/b.bin`, { size: 4, contentType: 'text/plain', expiresInSeconds: 60 });
  const short = await fetch(req.url, { method: 'PUT', headers: { ...req.headers, 'content-length': '3' }, body: 'abc' });
  t.equal(short.status, 400);
  t.match(await short.json(), { code: 'VALIDATION_FAILED', errors: [{ path: '/headers/content-length' }] }, 'the one problem shape, naming the header');
  t.same(readdirSync(join(dir, 'files', '.tmp')), [], 'no temporary file left');
});

t.test('local: a URL signed by one store directory is refused by another; restarts keep URLs valid', async (t) => {
  const a = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  const root = testRoot();
  await a.put(`${root}/k.txt`, Buffer.from('hello'), 'text/plain');
  const signed = await a.presignGet(`${root}/k.txt`, { expiresInSeconds: 60, contentType: 'text/plain' });
  current = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  const again = await fetch(signed);
  t.equal(await again.text(), 'hello', 'the same directory (a restart) keeps its key');
  const otherDir = join(dir, 'other');
  current = await LocalObjectStore.open({ dir: otherDir, publicUrl: url });
  await current.put(`${root}/k.txt`, Buffer.from('other'), 'text/plain');
  const refused = await fetch(signed);
  t.equal(refused.status, 403);
  t.match(await refused.json(), { code: 'SIGNED_URL_INVALID' });
});

t.test('local: a PUT refused before its body arrived closes its connection, so none is reused after unread bytes', async (t) => {
  const { request } = await import('node:http');
  const store = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  current = store;
  const put = await store.presignPut(`${testRoot()}/refused.bin`, { size: 4 * 1024 * 1024, contentType: 'application/pdf', expiresInSeconds: 60 });
  // The signed length, another type: refused from the headers, while 4 MiB are still to come.
  const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    const req = request(put.url, { method: 'PUT', headers: { 'content-length': String(4 * 1024 * 1024), 'content-type': 'text/plain' } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
    });
    req.on('error', reject);
    req.write(Buffer.alloc(64 * 1024));
  });
  t.equal(answer.status, 400);
  t.equal(answer.connection, 'close', 'the answer says the connection closes (once)');
});

t.test('local: a part still arriving when its upload is ended is not kept, nor does it bring the upload back', async (t) => {
  const { request } = await import('node:http');
  const store = await LocalObjectStore.open({ dir: join(dir, 'files'), publicUrl: url });
  current = store;
  const key = `${testRoot()}/late/file`;
  const id = await store.createMultipart(key, 'application/octet-stream');
  const size = 256 * 1024;
  const part = await store.presignPart(key, id, 1, { size, expiresInSeconds: 60 });
  const answer = new Promise<number>((resolve, reject) => {
    const req = request(part.url, { method: 'PUT', headers: { 'content-length': String(size) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.write(Buffer.alloc(1024));
    // The upload is ended once the node has checked that it exists and begun writing the part
    // (its temporary file appeared), then the rest of the part is sent.
    void (async () => {
      while (readdirSync(join(dir, 'files', '.tmp')).length === 0) await new Promise((r) => setTimeout(r, 5));
      await store.abortMultipart(key, id);
      req.end(Buffer.alloc(size - 1024));
    })().catch(reject);
  });
  t.equal(await answer, 404, 'the part is refused (UPLOAD_NOT_FOUND)');
  t.equal(await store.listParts(key, id), undefined, 'the ended upload stays ended');
});
