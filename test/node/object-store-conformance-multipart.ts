import { randomBytes } from 'node:crypto';
import type { Test } from 'tap';
import type { ObjectStore, SignedRequest } from '../../node/files/index.ts';

type WithStore = (title: string, fn: (t: Test, s: ObjectStore, root: string) => Promise<void>) => void;

/** S3's smallest part but the last: 5 MiB. */
const MIN_PART = 5 * 1024 * 1024;

const putPart = async (req: SignedRequest, body: Uint8Array) => {
  const res = await fetch(req.url, { method: 'PUT', headers: req.headers, body: new Uint8Array(body) });
  return { status: res.status, text: await res.text() };
};

/** Multipart uploads: the part of the ObjectStore contract that resumable uploads stand on. */
export function multipartConformance(withStore: WithStore): void {
  withStore('multipart: parts put in any order through signed URLs, nothing visible until completed, then one whole object', async (t, s, root) => {
    const key = `${root}/big/file`;
    const first = randomBytes(MIN_PART + 1);
    const last = randomBytes(1000);
    const id = await s.createMultipart(key, 'application/octet-stream');
    t.same(await s.listParts(key, id), [], 'no part at first');
    const url2 = await s.presignPart(key, id, 2, { size: last.length, expiresInSeconds: 300 });
    const url1 = await s.presignPart(key, id, 1, { size: first.length, expiresInSeconds: 300 });
    t.equal((await putPart(url2, last)).status, 200, 'the last part first');
    t.same(await s.listParts(key, id), [{ number: 2, size: 1000 }], 'the stored parts, with their sizes');
    t.equal(await s.head(key), undefined, 'no object before completing');
    t.same(
      (await collectKeys(s, `${root}/big/`)),
      [],
      'a listing shows no part',
    );
    // Sent without the signed Content-Length (fetch sets the body's own).
    const wrong = await fetch(url1.url, { method: 'PUT', body: new Uint8Array(first.subarray(0, 10)) });
    t.ok(wrong.status >= 400 && wrong.status < 500, `a part of another size than signed is refused (${wrong.status})`);
    await wrong.body?.cancel();
    t.equal((await putPart(url1, randomBytes(first.length))).status, 200, 'part 1, once');
    t.equal((await putPart(url1, first)).status, 200, 'part 1 again: it replaces the first');
    t.same(await s.listParts(key, id), [{ number: 1, size: first.length }, { number: 2, size: 1000 }]);
    await s.completeMultipart(key, id, [1, 2]);
    t.ok(Buffer.from((await s.read(key))!).equals(Buffer.concat([first, last])), 'the object is the parts in order, byte for byte');
    t.equal((await s.head(key))?.size, first.length + last.length);
    t.equal(await s.listParts(key, id), undefined, 'the upload is no longer unfinished');
    const late = await putPart(url2, last);
    t.ok(late.status >= 400 && late.status < 500, `a part URL of a completed upload puts nothing (${late.status})`);
    t.equal((await s.head(key))?.size, first.length + last.length, 'the object is unchanged');
  });

  withStore('multipart: completing with a part missing fails and keeps what is stored', async (t, s, root) => {
    const key = `${root}/gap/file`;
    const id = await s.createMultipart(key, 'application/octet-stream');
    t.equal((await putPart(await s.presignPart(key, id, 1, { size: 10, expiresInSeconds: 300 }), randomBytes(10))).status, 200);
    await t.rejects(s.completeMultipart(key, id, [1, 2]), 'part 2 is not stored');
    t.equal(await s.head(key), undefined, 'no object');
    t.same(await s.listParts(key, id), [{ number: 1, size: 10 }], 'part 1 is still there');
  });

  withStore('multipart: abort and deletePrefix end unfinished uploads, deleting their parts', async (t, s, root) => {
    const key = `${root}/ended/file`;
    const id = await s.createMultipart(key, 'application/octet-stream');
    const url = await s.presignPart(key, id, 1, { size: 10, expiresInSeconds: 300 });
    t.equal((await putPart(url, randomBytes(10))).status, 200);
    await s.abortMultipart(key, id);
    t.equal(await s.listParts(key, id), undefined, 'aborted');
    const again = await putPart(url, randomBytes(10));
    t.ok(again.status >= 400 && again.status < 500, `a part URL of an aborted upload puts nothing (${again.status})`);
    await s.abortMultipart(key, id);
    t.pass('aborting again succeeds');

    const under = `${root}/app/chat/upload/file`;
    const id2 = await s.createMultipart(under, 'application/octet-stream');
    t.equal((await putPart(await s.presignPart(under, id2, 1, { size: 10, expiresInSeconds: 300 }), randomBytes(10))).status, 200);
    await s.put(`${root}/app/chat/upload/record.json`, Buffer.from('{}'), 'application/json');
    await s.deletePrefix(`${root}/app/`);
    t.equal(await s.listParts(under, id2), undefined, 'an unfinished upload under a deleted prefix is ended');
    t.equal(await s.head(`${root}/app/chat/upload/record.json`), undefined, 'and the objects are gone');
  });
}

async function collectKeys(s: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of s.list(prefix)) keys.push(o.key);
  return keys;
}
