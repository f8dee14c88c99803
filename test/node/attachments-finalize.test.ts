import sharp from 'sharp';
import t, { type Test } from 'tap';
import { inspectFile, type ObjectStore } from '../../node/files/index.ts';
import { finalizeUpload, integration, putUpload, requireService, serviceFiles, startService, type Running } from '../helpers/index.ts';

/**
 * Finalize is idempotent under concurrency, on both object stores. Finalizes of one upload at once
 * (a client's retry racing its first request) answer one attachment, its file stays downloadable
 * and usage counts it once. A finalize that finds the file already rewritten by another finalize
 * (another node's, still running or stopped midway: made here through the ObjectStore interface,
 * as that node would) keeps those bytes and records the attachment: it never deletes them.
 */
const PHOTO = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#2a6' } })
  .jpeg({ quality: 80 })
  .withExif({ IFD0: { Copyright: 'where-the-photo-was-taken' } })
  .toBuffer();

async function suite(t: Test, svc: Running, files: ObjectStore) {
  const it = await integration(svc, `finalize-${files.kind}`);
  const alice = await it.user('alice');
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'race', memberIds: [] }, alice.jwt)).body.chatId as string;
  const finalize = (uploadId: string) => finalizeUpload(it.node, alice.jwt, chatId, uploadId);
  const put = () => putUpload(it.node, alice.jwt, chatId, new Uint8Array(PHOTO), 'photo.jpg', 'image/jpeg');
  /** Downloads the file and thumbnail as their uploader may before sending: their byte counts. */
  const download = async (id: string, size: number) => {
    const access = await it.node.get(`/api/chats/${chatId}/attachments/${id}`, alice.jwt);
    t.equal(access.status, 200, 'the uploader gets its URLs');
    const file = Buffer.from(await (await fetch(access.body.url)).arrayBuffer());
    t.equal(file.length, size, 'the file is stored, at the size the attachment says');
    t.notOk(file.includes('where-the-photo-was-taken'), 'without its metadata');
    const thumb = await fetch(access.body.thumbnailUrl);
    t.equal(thumb.status, 200, 'and its thumbnail');
    return file.length + (await thumb.arrayBuffer()).byteLength;
  };
  let counted = 0;

  await t.test('three finalizes at once, then one more: one attachment, counted once', async (t) => {
    const id = await put();
    const answers = await Promise.all([1, 2, 3].map(() => finalize(id)));
    t.same(answers.map((a) => a.status), [200, 200, 200], answers.map((a) => a.text).join('\n'));
    t.same(answers[1]!.body, answers[0]!.body, 'the same attachment');
    t.same(answers[2]!.body, answers[0]!.body);
    t.same((await finalize(id)).body, answers[0]!.body, 'and again after');
    counted += await download(id, answers[0]!.body.size as number);
    t.equal(await it.storedFileBytes(counted), counted, 'usage counts the file and its thumbnail once');
  });

  await t.test("a finalize that finds the file rewritten by another's keeps it", async (t) => {
    const id = await put();
    const inspected = await inspectFile(new Uint8Array(PHOTO));
    if ('unreadable' in inspected) throw new Error(inspected.unreadable);
    const stripped = inspected.bytes;
    t.not(stripped.length, PHOTO.length, 'stripping changes the size');
    await files.put(`a/${it.appId}/${chatId}/${id}/file`, stripped, 'image/jpeg');
    const done = await finalize(id);
    t.equal(done.status, 200, `finalized (${done.status === 200 ? 'ok' : done.text})`);
    t.equal(done.body.size, stripped.length, 'the bytes already stripped are the file');
    t.match(done.body, { type: 'image/jpeg', width: 640, height: 480, thumbnail: { type: 'image/webp' } });
    t.same((await finalize(id)).body, done.body, 'finalize again: the same attachment');
    counted += await download(id, stripped.length);
    t.equal(await it.storedFileBytes(counted), counted, 'usage counts it once');
  });
}

async function onStore(t: Test, env: Record<string, string>) {
  const svc = await startService({ USAGE_FLUSH_SECONDS: '1', ...env });
  t.teardown(() => svc.stop());
  const files = await serviceFiles(svc, env);
  t.teardown(() => files.close());
  await suite(t, svc, files);
}

t.test('embedded store', (t) => onStore(t, {}));
const s3 = await requireService('objectstore', (line) => t.comment(line));
if (!s3) {
  t.comment('!!! finalize races on S3 SKIPPED: no S3-compatible server (scripts/services.sh start objectstore) !!!');
  t.skip('object store not running', () => undefined);
} else {
  t.test('S3-compatible store', (t) =>
    onStore(t, {
      ATTACHMENTS_STORE: 's3',
      S3_ENDPOINT: `http://${s3.host}:${s3.port}`,
      S3_BUCKET: 'chat-service-finalize-tests',
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
    }),
  );
}
