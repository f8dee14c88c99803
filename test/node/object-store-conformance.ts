import { randomBytes, randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { MAX_OBJECT_KEY_LENGTH, type ObjectStore } from '../../node/files/index.ts';
import { multipartConformance } from './object-store-conformance-multipart.ts';

/** A fresh store for one test, and how to close it. Keys under `root` are this test's alone. */
export interface OpenedObjectStore {
  store: ObjectStore;
  root: string;
  close: () => Promise<void>;
}

const collect = async <T>(items: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
};

/** Every byte value, so an encoding on the way would show. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);

/**
 * The ObjectStore contract (node/files/object-store.ts), run against every implementation: the
 * embedded one always, the S3 one against a real S3-compatible server. Signed URLs are used as a
 * client would, with fetch.
 */
export function objectStoreConformance(t: Test, name: string, open: () => Promise<OpenedObjectStore>): void {
  const withStore = (title: string, fn: (t: Test, s: ObjectStore, root: string) => Promise<void>) =>
    t.test(`${name}: ${title}`, async (t) => {
      const { store, root, close } = await open();
      try {
        await fn(t, store, root);
      } finally {
        await close();
      }
    });

  withStore('a put object reads back byte for byte, with its size; an absent one is undefined', async (t, s, root) => {
    const key = `${root}/a/all-bytes.bin`;
    t.equal(await s.head(key), undefined, 'head before the put');
    t.equal(await s.read(key), undefined, 'read before the put');
    await s.put(key, ALL_BYTES, 'application/octet-stream');
    const head = await s.head(key);
    t.equal(head?.size, 256);
    t.equal(head?.key, key);
    t.ok(head && Math.abs(head.modifiedAt.getTime() - Date.now()) < 60_000, 'modifiedAt is about now');
    t.same(Buffer.from((await s.read(key))!), Buffer.from(ALL_BYTES));
    const big = randomBytes(1024 * 1024 + 17);
    await s.put(`${root}/a/big.bin`, big, 'application/octet-stream');
    t.ok(Buffer.from((await s.read(`${root}/a/big.bin`))!).equals(big), 'a 1 MB object whole');
    await s.put(`${root}/a/empty`, new Uint8Array(0), 'text/plain');
    t.equal((await s.head(`${root}/a/empty`))?.size, 0, 'an empty object exists');
  });

  withStore('read takes a range: start inclusive, end exclusive, clamped to the end', async (t, s, root) => {
    const key = `${root}/range.bin`;
    await s.put(key, ALL_BYTES, 'application/octet-stream');
    t.same([...(await s.read(key, { start: 0, end: 4 }))!], [0, 1, 2, 3]);
    t.same([...(await s.read(key, { start: 250, end: 1000 }))!], [250, 251, 252, 253, 254, 255], 'past the end: clamped');
    t.equal((await s.read(key, { start: 300, end: 400 }))!.length, 0, 'wholly past the end: no bytes');
    t.equal(await s.read(`${root}/none`, { start: 0, end: 4 }), undefined, 'absent object');
  });

  withStore('a second put replaces the object whole', async (t, s, root) => {
    const key = `${root}/replace.txt`;
    await s.put(key, Buffer.from('a longer first version'), 'text/plain');
    await s.put(key, Buffer.from('short'), 'text/plain');
    t.equal(Buffer.from((await s.read(key))!).toString(), 'short');
    t.equal((await s.head(key))?.size, 5);
  });

  withStore('delete removes one object and is idempotent', async (t, s, root) => {
    await s.put(`${root}/d/1`, Buffer.from('one'), 'text/plain');
    await s.put(`${root}/d/2`, Buffer.from('two'), 'text/plain');
    await s.delete(`${root}/d/1`);
    await s.delete(`${root}/d/1`);
    await s.delete(`${root}/never-written`);
    t.equal(await s.head(`${root}/d/1`), undefined);
    t.equal((await s.head(`${root}/d/2`))?.size, 3, 'the other object stays');
  });

  withStore('list yields exactly the objects under a prefix; deletePrefix removes them and no others', async (t, s, root) => {
    const inside = [`${root}/chat/x/1`, `${root}/chat/x/2.thumb`, `${root}/chat/x/deep/3`];
    // Neighbours whose keys share the prefix's text but not its folder.
    const outside = [`${root}/chat/x-1/1`, `${root}/chat/xy`, `${root}/chat/y/1`];
    for (const [i, key] of [...inside, ...outside].entries()) await s.put(key, Buffer.alloc(i + 1, 7), 'application/octet-stream');
    const listed = await collect(s.list(`${root}/chat/x/`));
    t.same(listed.map((o) => o.key).sort(), [...inside].sort());
    t.same(listed.map((o) => [o.key, o.size]).sort(), inside.map((key, i) => [key, i + 1]).sort(), 'with their sizes');
    t.same(await collect(s.list(`${root}/nothing/`)), [], 'an empty prefix lists nothing');
    t.equal(await s.deletePrefix(`${root}/chat/x/`), 3);
    t.same(await collect(s.list(`${root}/chat/x/`)), []);
    for (const key of outside) t.ok(await s.head(key), `${key} stays`);
    t.equal(await s.deletePrefix(`${root}/chat/x/`), 0, 'again: nothing to delete');
  });

  withStore('a bad key or prefix is refused before any I/O', async (t, s, root) => {
    const bad = ['', '../escape', `${root}/../escape`, `${root}//double`, `${root}/.hidden`, `${root}/trailing/`, `${root}/sp ace`, `${root}/back\\slash`, 'x'.repeat(MAX_OBJECT_KEY_LENGTH + 1)];
    for (const key of bad) {
      await t.rejects(s.put(key, Buffer.from('x'), 'text/plain'), { code: 'INVALID_OBJECT_KEY' }, `put ${JSON.stringify(key.slice(0, 40))}`);
      await t.rejects(s.head(key), { code: 'INVALID_OBJECT_KEY' }, `head ${JSON.stringify(key.slice(0, 40))}`);
      await t.rejects(s.presignGet(key, { expiresInSeconds: 60, contentType: 'text/plain' }), { code: 'INVALID_OBJECT_KEY' });
    }
    await t.rejects(s.deletePrefix(`${root}/no-slash`), { code: 'INVALID_OBJECT_KEY' }, 'a prefix must end with /');
    await t.rejects(s.deletePrefix('/'), { code: 'INVALID_OBJECT_KEY' }, 'not the whole store');
    await t.rejects(collect(s.list('../')), { code: 'INVALID_OBJECT_KEY' });
  });

  withStore('a signed PUT uploads exactly the signed size and type, and nothing else', async (t, s, root) => {
    const key = `${root}/up/photo.png`;
    const bytes = randomBytes(5000);
    const req = await s.presignPut(key, { size: bytes.length, contentType: 'image/png', expiresInSeconds: 300 });
    t.equal(req.method, 'PUT');
    t.ok(req.expiresAt.getTime() > Date.now() + 200_000, 'expires in about 300 s');
    const wrongSize = await fetch(req.url, { method: 'PUT', headers: { ...req.headers, 'content-length': String(bytes.length - 1) }, body: bytes.subarray(1) });
    t.ok(wrongSize.status >= 400 && wrongSize.status < 500, `a shorter body is refused (${wrongSize.status})`);
    await wrongSize.body?.cancel();
    const wrongType = await fetch(req.url, { method: 'PUT', headers: { ...req.headers, 'content-type': 'text/html' }, body: bytes });
    t.ok(wrongType.status >= 400 && wrongType.status < 500, `another type is refused (${wrongType.status})`);
    await wrongType.body?.cancel();
    t.equal(await s.head(key), undefined, 'nothing stored by the refused requests');
    const ok = await fetch(req.url, { method: 'PUT', headers: req.headers, body: bytes });
    t.equal(ok.status, 200, await ok.text());
    t.ok(Buffer.from((await s.read(key))!).equals(bytes), 'the uploaded bytes');
    const other = await fetch(req.url.replace('photo.png', 'other.png'), { method: 'PUT', headers: req.headers, body: bytes });
    t.ok(other.status >= 400 && other.status < 500, `the URL does not work for another key (${other.status})`);
    await other.body?.cancel();
    t.equal(await s.head(`${root}/up/other.png`), undefined);
  });

  withStore('a signed GET serves the object with the signed type and name, and only that object', async (t, s, root) => {
    const key = `${root}/files/report.pdf`;
    await s.put(key, ALL_BYTES, 'application/pdf');
    const inline = await fetch(await s.presignGet(key, { expiresInSeconds: 300, contentType: 'application/pdf' }));
    t.equal(inline.status, 200);
    t.equal(inline.headers.get('content-type'), 'application/pdf');
    t.same(Buffer.from(await inline.arrayBuffer()), Buffer.from(ALL_BYTES));
    const named = await fetch(await s.presignGet(key, { expiresInSeconds: 300, contentType: 'application/pdf', downloadName: 'Q3 report (final).pdf' }));
    t.match(named.headers.get('content-disposition') ?? '', /^attachment; filename\*=UTF-8''Q3%20report%20\(final\)\.pdf$/);
    await named.body?.cancel();
    const url = await s.presignGet(key, { expiresInSeconds: 300, contentType: 'application/pdf' });
    await s.put(`${root}/files/secret.pdf`, Buffer.from('secret'), 'application/pdf');
    const moved = await fetch(url.replace('report.pdf', 'secret.pdf'));
    t.ok(moved.status === 403 || moved.status === 400, `another key with the same signature is refused (${moved.status})`);
    await moved.body?.cancel();
    const asPut = await fetch(url, { method: 'PUT', body: 'overwrite' });
    t.ok(asPut.status >= 400 && asPut.status < 500, `a GET URL does not PUT (${asPut.status})`);
    await asPut.body?.cancel();
    t.same(Buffer.from((await s.read(key))!), Buffer.from(ALL_BYTES), 'the object is unchanged');
    // Larger than socket buffers: a transport that streams must wait for the socket to drain.
    const large = randomBytes(8 * 1024 * 1024 + 3);
    await s.put(`${root}/files/large.bin`, large, 'application/octet-stream');
    const whole = await fetch(await s.presignGet(`${root}/files/large.bin`, { expiresInSeconds: 300, contentType: 'application/octet-stream' }));
    t.ok(Buffer.from(await whole.arrayBuffer()).equals(large), 'an 8 MB object is served whole');
    await s.put(`${root}/files/empty.txt`, new Uint8Array(0), 'text/plain');
    const empty = await fetch(await s.presignGet(`${root}/files/empty.txt`, { expiresInSeconds: 300, contentType: 'text/plain' }));
    t.equal(empty.status, 200, 'an empty file is served');
    t.equal((await empty.arrayBuffer()).byteLength, 0, 'with no bytes');
    await s.delete(key);
    const gone = await fetch(url);
    t.equal(gone.status, 404, 'a deleted object is gone for a URL signed before');
    await gone.body?.cancel();
  });

  multipartConformance(withStore);

  withStore('signed URLs expire', async (t, s, root) => {
    const key = `${root}/expiring.txt`;
    await s.put(key, Buffer.from('soon gone'), 'text/plain');
    const get = await s.presignGet(key, { expiresInSeconds: 1, contentType: 'text/plain' });
    const put = await s.presignPut(`${root}/expiring-upload.txt`, { size: 3, contentType: 'text/plain', expiresInSeconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const late = await fetch(get);
    t.equal(late.status, 403, 'GET after expiry');
    await late.body?.cancel();
    const latePut = await fetch(put.url, { method: 'PUT', headers: put.headers, body: 'abc' });
    t.equal(latePut.status, 403, 'PUT after expiry');
    await latePut.body?.cancel();
    t.equal(await s.head(`${root}/expiring-upload.txt`), undefined);
    await t.rejects(s.presignGet(key, { expiresInSeconds: 0, contentType: 'text/plain' }), RangeError, 'a lifetime of 0 s is refused');
    await t.rejects(s.presignGet(key, { expiresInSeconds: 7 * 24 * 3600, contentType: 'text/plain' }), RangeError, 'so is a week');
  });
}

/** A root for one test's keys: tenant-like, unique. */
export const testRoot = () => `t-${randomUUID()}`;
