import { ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { requireService, startService, integration, type ChatUserSession, type Running } from '../helpers/index.ts';

/**
 * Resumable uploads (README, "Attachments"), on both object stores: a multipart upload's parts go
 * to their own signed URLs in any order; one interrupted midway is resumed from what the node says
 * it has (fresh URLs for the parts missing); finalize names the parts still missing; an abandoned
 * one's parts are deleted when it expires.
 */
const PART = 8 * 1024 * 1024;

interface SignedPut {
  url: string;
  headers: Record<string, string>;
}

const put = async (req: SignedPut, body: Uint8Array) => {
  const res = await fetch(req.url, { method: 'PUT', headers: req.headers, body: new Uint8Array(body) });
  return { status: res.status, text: await res.text() };
};

/** Whether anything of an unfinished multipart upload is left under the application's keys. */
type LeftOver = (svc: Running, appId: string) => Promise<string[]>;

async function suite(t: Test, name: string, env: Record<string, string>, leftOver: LeftOver) {
  const svc = await startService({ ...env });
  t.teardown(() => svc.stop());
  const it = await integration(svc, `resume-${name}`);
  const [alice, bob, carol] = [await it.user('alice'), await it.user('bob'), await it.user('carol')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'big files', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const uploads = `/api/chats/${chatId}/uploads`;
  const state = (who: ChatUserSession, uploadId: string) => it.node.get(`${uploads}/${uploadId}`, who.jwt);

  await t.test(`${name}: a multipart upload interrupted midway resumes where it stopped`, async (t) => {
    const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2 * PART + 1000 - 9)]);
    const asked = await it.node.post(uploads, { name: 'scan.pdf', size: file.length, type: 'application/pdf', multipart: true }, alice.jwt);
    t.equal(asked.status, 201, asked.text);
    t.notOk('upload' in asked.body, 'no single PUT');
    const parts = asked.body.parts as { number: number; offset: number; size: number; received: boolean; upload: SignedPut }[];
    t.same(parts.map((p) => [p.number, p.offset, p.size, p.received]), [[1, 0, PART, false], [2, PART, PART, false], [3, 2 * PART, 1000, false]], 'three parts: 8 MiB, 8 MiB and the rest');
    const bytesOf = (p: { offset: number; size: number }) => file.subarray(p.offset, p.offset + p.size);
    t.equal((await put(parts[2]!.upload, bytesOf(parts[2]!))).status, 200, 'the last part first');
    t.equal((await put(parts[0]!.upload, bytesOf(parts[0]!))).status, 200, 'then the first; the second is "interrupted"');

    const early = await it.node.post(`${uploads}/${asked.body.uploadId}/finalize`, undefined, alice.jwt);
    t.match(early, { status: 409, body: { code: 'UPLOAD_INCOMPLETE', errors: [{ path: '/parts/1', message: /part 2 / }] } }, 'finalize names the part missing');
    t.equal(early.body.errors.length, 1, 'and only it');

    const resumed = await state(alice, asked.body.uploadId);
    t.equal(resumed.status, 200, resumed.text);
    t.match(resumed.body, { finalized: false, size: file.length, name: 'scan.pdf', received: PART + 1000 });
    t.same(resumed.body.parts.map((p: { received: boolean; upload?: unknown }) => [p.received, p.upload !== undefined]), [[true, false], [false, true], [true, false]], 'received parts are named; a fresh URL for the missing one');
    t.equal((await put(resumed.body.parts[1].upload, bytesOf(parts[1]!))).status, 200, 'the missing part, to its fresh URL');

    const done = await it.node.post(`${uploads}/${asked.body.uploadId}/finalize`, undefined, alice.jwt);
    t.match(done, { status: 200, body: { id: asked.body.uploadId, size: file.length, type: 'application/pdf', name: 'scan.pdf' } });
    t.same((await it.node.post(`${uploads}/${asked.body.uploadId}/finalize`, undefined, alice.jwt)).body, done.body, 'finalizing again: the same attachment');
    t.match(await state(alice, asked.body.uploadId), { status: 200, body: { finalized: true, attachment: { id: asked.body.uploadId }, received: file.length } });
    // Refused before its 8 MiB body is read: the node may close the connection as it answers.
    const late = await put(parts[1]!.upload, randomBytes(PART)).catch(() => ({ status: 0, text: 'connection closed' }));
    t.ok(late.status === 0 || (late.status >= 400 && late.status < 500), `a part URL after the finalize puts nothing (${late.status})`);

    const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'the scan', attachments: [asked.body.uploadId] }, alice.jwt);
    t.equal(sent.status, 201, sent.text);
    const access = await it.node.get(`/api/chats/${chatId}/attachments/${asked.body.uploadId}`, bob.jwt);
    t.equal(access.status, 200, access.text);
    const got = Buffer.from(await (await fetch(access.body.url)).arrayBuffer());
    t.ok(got.equals(file), 'another member downloads the file byte for byte');

    t.match(await state(bob, asked.body.uploadId), { status: 404, body: { code: 'UPLOAD_NOT_FOUND' } }, "another member cannot see someone else's upload");
    t.match(await state(carol, asked.body.uploadId), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, 'a non-member is refused');
    t.match(await it.node.get(`${uploads}/not-a-uuid`, alice.jwt), { status: 400, body: { code: 'VALIDATION_FAILED' } });
    t.match(await it.node.post(uploads, { name: 'f', size: 10, multipart: 'yes' }, alice.jwt), { status: 400, body: { errors: [{ path: '/body/multipart' }] } });
  });

  await t.test(`${name}: a single-PUT upload says whether its bytes arrived, and signs a new URL while they have not`, async (t) => {
    const bytes = Buffer.from('%PDF-1.4\nsmall\n');
    const asked = await it.node.post(uploads, { name: 'small.pdf', size: bytes.length }, alice.jwt);
    t.equal(asked.status, 201, asked.text);
    t.notOk('parts' in asked.body);
    const before = await state(alice, asked.body.uploadId);
    t.match(before.body, { finalized: false, received: 0, upload: { method: 'PUT', url: String } });
    t.equal((await put(before.body.upload, bytes)).status, 200, 'the new URL works');
    const after = await state(alice, asked.body.uploadId);
    t.match(after.body, { finalized: false, received: bytes.length });
    t.notOk('upload' in after.body, 'no URL once the bytes are there');
  });

  await t.test(`${name}: an abandoned multipart upload's parts are deleted when it expires`, async (t) => {
    const short = await startService({ ...env, ATTACHMENT_UPLOAD_TTL_SECONDS: '5', ATTACHMENT_DELETE_DELAY_SECONDS: '1', ATTACHMENT_SWEEP_SECONDS: '1' });
    t.teardown(() => short.stop());
    const other = await integration(short, `resume-${name}-gc`);
    const dan = await other.user('dan');
    const theirs = (await other.node.post('/api/chats', { type: 'group', name: 'gc', memberIds: [] }, dan.jwt)).body.chatId as string;
    const asked = await other.node.post(`/api/chats/${theirs}/uploads`, { name: 'f', size: PART + 10, multipart: true }, dan.jwt);
    t.equal(asked.status, 201, asked.text);
    t.equal((await put(asked.body.parts[1].upload, randomBytes(10))).status, 200, 'one part put, then abandoned');
    t.not((await leftOver(short, other.appId)).length, 0, 'its part is stored');
    let left: string[] = [];
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
      left = await leftOver(short, other.appId);
      if (left.length === 0) break;
    }
    t.same(left, [], 'within the upload TTL, the delay and a sweep, nothing of it is left');
  });
}

t.test('embedded store', (t) => suite(t, 'local', {}, (svc, appId) => filesUnder(join(svc.dataDir, 'files', 'a', appId))));

const s3 = await requireService('objectstore', (line) => t.comment(line));
if (!s3) {
  t.skip('object store not running', () => undefined);
} else {
  const bucket = 'chat-service-attachment-tests';
  const credentials = { accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev', secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret' };
  const endpoint = `http://${s3.host}:${s3.port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  t.teardown(() => client.destroy());
  t.test('S3-compatible store', (t) =>
    suite(t, 's3', { ATTACHMENTS_STORE: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_ACCESS_KEY_ID: credentials.accessKeyId, S3_SECRET_ACCESS_KEY: credentials.secretAccessKey }, async (_svc, appId) => {
      const r = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: `a/${appId}/` }));
      return (r.Uploads ?? []).map((u) => `${u.Key} (${u.UploadId})`);
    }),
  );
}

/** Every file under `dir`, hidden ones (the embedded store's parts) included. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}
