import sharp from 'sharp';
import t, { type Test } from 'tap';
import { fileGone, requireService, serviceFiles, startService, integration, WsClient, type ChatUserSession, type Running } from '../helpers/index.ts';
import { WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Attachments end to end, on both object stores: the embedded one (files under DATA_DIR, served
 * by the node) and a real S3-compatible server. Uploads go where the node's answer says, with
 * fetch, as a browser or a backend would.
 */
const MAX_BYTES = 1_000_000;

async function pngWithMetadata(): Promise<Buffer> {
  return sharp({ create: { width: 640, height: 480, channels: 3, background: '#2a6' } })
    .png()
    .withExif({ IFD0: { Copyright: 'where-the-photo-was-taken' } })
    .toBuffer();
}

/** A small PDF: its magic number is what counts. */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
/** A Windows executable's header, named and declared as a PNG. */
const EXE_AS_PNG = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(510, 0x90)]);

async function suite(t: Test, name: string, env: Record<string, string>) {
  // Deletions are swept within about 2 s here (README: ATTACHMENT_DELETE_DELAY_SECONDS + ATTACHMENT_SWEEP_SECONDS).
  const svc: Running = await startService({ ATTACHMENT_MAX_BYTES: String(MAX_BYTES), ATTACHMENT_DELETE_DELAY_SECONDS: '1', ATTACHMENT_SWEEP_SECONDS: '1', WEBHOOK_ALLOW_INSECURE_URLS: 'true', ...env });
  t.teardown(() => svc.stop());
  const files = await serviceFiles(svc, env);
  t.teardown(() => files.close());
  const it = await integration(svc, `att-${name}`);
  const [alice, bob, carol] = [await it.user('alice'), await it.user('bob'), await it.user('carol')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'files', memberIds: [bob.userId] }, alice.jwt);
  t.equal(chat.status, 201, chat.text);
  const chatId = chat.body.chatId as string;

  /** Asks for an upload, puts the bytes where told, finalizes: the finalize's answer. */
  const upload = async (who: ChatUserSession, bytes: Buffer, name: string, type: string) => {
    const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name, size: bytes.length, type }, who.jwt);
    if (created.status !== 201) return created;
    const { upload: put, uploadId } = created.body as { uploadId: string; upload: { url: string; headers: Record<string, string> } };
    const stored = await fetch(put.url, { method: 'PUT', headers: put.headers, body: new Uint8Array(bytes) });
    t.equal(stored.status, 200, `${name}: the PUT is stored (${await stored.text()})`);
    return it.node.post(`/api/chats/${chatId}/uploads/${uploadId}/finalize`, undefined, who.jwt);
  };

  await t.test(`${name}: an image and a PDF, uploaded by one member and fetched by another`, async (t) => {
    const png = await pngWithMetadata();
    t.ok(png.includes('where-the-photo-was-taken'), 'the upload carries its metadata');
    const image = await upload(alice, png, 'holiday.png', 'image/png');
    t.equal(image.status, 200, image.text);
    t.match(image.body, { name: 'holiday.png', type: 'image/png', width: 640, height: 480, thumbnail: { width: 320, height: 240, type: 'image/webp' } });
    t.match(image.body.placeholder, /^[A-Za-z0-9+/]+=*$/, 'a ThumbHash placeholder');
    const again = await it.node.post(`/api/chats/${chatId}/uploads/${image.body.id}/finalize`, undefined, alice.jwt);
    t.same(again.body, image.body, 'finalize again: the same attachment');
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${image.body.id}`, bob.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, 'another member gets nothing before it is sent');
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'holiday', attachments: [image.body.id] }, alice.jwt)).status, 201);

    const access = await it.node.get(`/api/chats/${chatId}/attachments/${image.body.id}`, bob.jwt);
    t.equal(access.status, 200, access.text);
    t.same(access.body.attachment, image.body);
    const file = await fetch(access.body.url);
    t.equal(file.status, 200);
    t.equal(file.headers.get('content-type'), 'image/png');
    const served = Buffer.from(await file.arrayBuffer());
    t.equal(served.length, image.body.size);
    t.notOk(served.includes('where-the-photo-was-taken'), 'the stored image has no metadata left');
    t.equal((await sharp(served).metadata()).width, 640, 'and is still the image');
    const thumb = await fetch(access.body.thumbnailUrl);
    t.equal(thumb.headers.get('content-type'), 'image/webp');
    t.match(await sharp(Buffer.from(await thumb.arrayBuffer())).metadata(), { format: 'webp', width: 320, height: 240 });

    const pdf = await upload(bob, PDF, 'report.pdf', 'application/pdf');
    t.equal(pdf.status, 200, pdf.text);
    t.match(pdf.body, { name: 'report.pdf', type: 'application/pdf', size: PDF.length });
    t.notOk('thumbnail' in pdf.body, 'no thumbnail for a PDF');
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'the report', attachments: [pdf.body.id] }, bob.jwt)).status, 201);
    const pdfAccess = await it.node.get(`/api/chats/${chatId}/attachments/${pdf.body.id}`, alice.jwt);
    const download = await fetch(pdfAccess.body.url);
    t.equal(download.headers.get('content-type'), 'application/octet-stream', 'a file that is not an image is never rendered');
    t.equal(download.headers.get('content-disposition'), "attachment; filename*=UTF-8''report.pdf");
    t.same(Buffer.from(await download.arrayBuffer()), PDF);
  });

  await t.test(`${name}: non-members, another application's users and removed members are refused`, async (t) => {
    const png = await pngWithMetadata();
    const image = await upload(alice, png, 'a.png', 'image/png');
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'a', attachments: [image.body.id] }, alice.jwt)).status, 201);
    const path = `/api/chats/${chatId}/attachments/${image.body.id}`;
    t.equal((await it.node.get(path, bob.jwt)).status, 200, 'a member gets URLs');
    t.match(await it.node.get(path, carol.jwt), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, 'a non-member');
    t.match(await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'x.png', size: 10, type: 'image/png' }, carol.jwt), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, 'a non-member cannot upload');
    const other = await integration(svc, `att-other-${name}`);
    const mallory = await other.user('mallory');
    t.match(await it.node.get(path, mallory.jwt), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, "another application's user");
    t.match(await it.node.post(`/api/chats/${chatId}/uploads/${image.body.id}/finalize`, undefined, bob.jwt), { status: 404, body: { code: 'UPLOAD_NOT_FOUND' } }, "a member cannot finalize another's upload");
    const removed = await it.node.del(`/api/chats/${chatId}/members/${bob.userId}`, alice.jwt);
    t.equal(removed.status, 204, removed.text);
    t.match(await it.node.get(path, bob.jwt), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, 'a removed member gets no new URL');
    const back = await it.node.post(`/api/chats/${chatId}/members`, { userIds: [bob.userId] }, alice.jwt);
    t.ok(back.status < 300, back.text);
    t.equal((await it.node.get(path, bob.jwt)).status, 200, 'back in the chat: URLs again');
    const left = await it.node.post(`/api/chats/${chatId}/leave`, undefined, bob.jwt);
    t.ok(left.status < 300, left.text);
    t.match(await it.node.get(path, bob.jwt), { status: 404, body: { code: 'CHAT_NOT_FOUND' } }, 'a member who left gets no new URL');
    t.ok((await it.node.post(`/api/chats/${chatId}/members`, { userIds: [bob.userId] }, alice.jwt)).status < 300);

    // The node signs for 5 minutes (DOWNLOAD_URL_SECONDS); the same signing, made short here
    // through the store's interface, shows what happens when such a URL expires.
    const short = await files.presignGet(`a/${it.appId}/${chatId}/${image.body.id}/file`, { expiresInSeconds: 2, contentType: 'image/png' });
    t.equal((await fetch(short)).status, 200, 'a download URL works until it expires');
    let status = 200;
    for (const until = Date.now() + 10_000; Date.now() < until && status === 200; await new Promise((r) => setTimeout(r, 250))) {
      const res = await fetch(short);
      status = res.status;
      await res.body?.cancel();
    }
    t.equal(status, 403, 'and is refused once expired');
  });

  await t.test(`${name}: webhooks carry the attachments' metadata, never their bytes or URLs`, async (t) => {
    const receiver = await WebhookReceiver.start();
    t.teardown(() => receiver.stop());
    const hook = await it.control.post(`/api/client/apps/${it.appId}/webhooks`, { url: receiver.url, events: ['message.new'] }, it.accessToken);
    t.equal(hook.status, 201, hook.text);
    receiver.secret = hook.body.secret as string;
    const image = await upload(alice, await pngWithMetadata(), 'hooked.png', 'image/png');
    const pdf = await upload(alice, PDF, 'hooked.pdf', 'application/pdf');
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'for the hook', attachments: [image.body.id, pdf.body.id] }, alice.jwt);
    t.equal(sent.status, 201, sent.text);
    const mine = () => receiver.ofType('message.new').find((d) => JSON.stringify(d.data).includes(sent.body.message.messageId as string));
    await receiver.until(() => mine() !== undefined, 10_000, 'message.new');
    const event = JSON.stringify(mine()!.data);
    t.same(JSON.parse(event).attachments, [image.body, pdf.body], 'the metadata, as the message carries it');
    t.notMatch(event, /https?:|\/v1\/files|X-Amz|%PDF|"url"/, 'no URL and no bytes');
    await it.control.del(`/api/client/apps/${it.appId}/webhooks/${hook.body.id}`, it.accessToken);
  });

  await t.test(`${name}: a message carries attachments to every member, over REST and WebSocket, in history too`, async (t) => {
    const bobSocket = await WsClient.connect(svc.nodeUrl, bob.jwt);
    t.teardown(() => bobSocket.close());
    const png = await pngWithMetadata();
    const image = await upload(alice, png, 'sunset.png', 'image/png');
    const pdf = await upload(alice, PDF, 'notes.pdf', 'application/pdf');
    const arrived = bobSocket.waitFor((f) => f.type === 'message.new' && f.message?.attachments?.length === 2, 5000);
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: '', attachments: [image.body.id, pdf.body.id], idempotencyKey: `files-${name}` }, alice.jwt);
    t.equal(sent.status, 201, sent.text);
    t.same(sent.body.message.attachments, [image.body, pdf.body], 'the message carries both, in the order sent, content empty');
    t.equal(sent.body.message.content, '');
    const event = await arrived;
    t.same(event.message.attachments, [image.body, pdf.body], 'the other member gets them with the message');
    const retry = await it.node.post(`/api/messages/${chatId}`, { content: '', attachments: [image.body.id, pdf.body.id], idempotencyKey: `files-${name}` }, alice.jwt);
    t.equal(retry.status, 200, 'a retry with the same key is the same message');
    t.equal(retry.body.message.messageId, sent.body.message.messageId);
    const history = await it.node.get(`/api/messages/getMessages/${chatId}?size=5`, bob.jwt);
    t.same(history.body.messages.find((m: { messageId: string }) => m.messageId === sent.body.message.messageId)?.attachments, [image.body, pdf.body], 'history has them');

    const again = await it.node.post(`/api/messages/${chatId}`, { content: 'once more', attachments: [image.body.id] }, alice.jwt);
    t.match(again, { status: 409, body: { code: 'ATTACHMENT_IN_USE', errors: [{ path: '/body/attachments/0' }] } }, 'one file is sent in one message');
    const racing = await upload(alice, PDF, 'race.pdf', 'application/pdf');
    const both = await Promise.all([1, 2].map((n) => it.node.post(`/api/messages/${chatId}`, { content: `race ${n}`, attachments: [racing.body.id] }, alice.jwt)));
    t.same(both.map((r) => r.status).sort(), [201, 409], 'two sends at once with one file: one carries it, the other is refused (the first still being written)');
    const stolen = await it.node.post(`/api/messages/${chatId}`, { content: 'mine now', attachments: [pdf.body.id] }, bob.jwt);
    t.match(stolen, { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, "a member cannot send another's upload");
    const empty = await it.node.post(`/api/messages/${chatId}`, { content: '' }, alice.jwt);
    t.match(empty, { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/body/content' }] } }, 'empty content needs attachments');
    const unknown = await it.node.post(`/api/messages/${chatId}`, { content: 'x', attachments: ['00000000-0000-4000-8000-000000000000'] }, alice.jwt);
    t.match(unknown, { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } });
    const tooMany = await it.node.post(`/api/messages/${chatId}`, { content: 'x', attachments: Array.from({ length: 11 }, (_, i) => `00000000-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`) }, alice.jwt);
    t.match(tooMany, { status: 400, body: { code: 'VALIDATION_FAILED' } }, 'at most 10');
    const winner = both.find((r) => r.status === 201)!;
    const next = await it.node.post(`/api/messages/${chatId}`, { content: 'after the refusals' }, alice.jwt);
    t.equal(next.body.message.seq, winner.body.message.seq + 1, 'the refused sends took no seq: no gap');

    const third = await upload(bob, PDF, 'bob.pdf', 'application/pdf');
    const aliceSocket = await WsClient.connect(svc.nodeUrl, alice.jwt);
    t.teardown(() => aliceSocket.close());
    const got = aliceSocket.waitFor((f) => f.type === 'message.new' && f.message?.attachments?.[0]?.id === third.body.id, 5000);
    const ack = await bobSocket.request({ type: 'message.send', chatId, content: 'over the socket', attachments: [third.body.id] });
    t.equal(ack.type, 'ack', JSON.stringify(ack));
    t.same((await got).message.attachments, [third.body], 'a WebSocket send carries them too');
    const emptyFrame = await bobSocket.request({ type: 'message.send', chatId, content: '' });
    t.match(emptyFrame, { type: 'error', code: 'VALIDATION_FAILED' });

    const removed = await it.node.del(`/api/messages/${chatId}/${sent.body.message.messageId}`, alice.jwt);
    t.equal(removed.status, 200, removed.text);
    t.notOk('attachments' in removed.body.message, 'a deleted message shows no files');
  });

  /** Polls until nothing is left under `prefix` in the store (the sweep deleted it), for at most 15 s. */
  const emptied = async (prefix: string) => {
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
      let left = 0;
      for await (const _ of files.list(prefix)) left++;
      if (left === 0) return true;
    }
    return false;
  };

  await t.test(`${name}: a deleted message's files, a deleted chat's files and a hidden message's files`, async (t) => {
    const image = await upload(alice, await pngWithMetadata(), 'gone.png', 'image/png');
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: 'soon deleted', attachments: [image.body.id] }, alice.jwt);
    t.equal(sent.status, 201, sent.text);
    const urls = (await it.node.get(`/api/chats/${chatId}/attachments/${image.body.id}`, bob.jwt)).body;
    t.equal((await fetch(urls.url)).status, 200, 'served while the message is there');
    const deleted = await it.node.del(`/api/messages/${chatId}/${sent.body.message.messageId}`, alice.jwt);
    t.equal(deleted.status, 200, deleted.text);
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${image.body.id}`, bob.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, 'no new URL once the message is deleted');
    t.ok(await fileGone(urls.url), 'the file is deleted from the store within seconds');
    t.ok(await fileGone(urls.thumbnailUrl), 'and its thumbnail');
    // The node's route refuses a hidden or deleted message's file at once: the store says it is gone.
    t.ok(await emptied(`a/${it.appId}/${chatId}/${image.body.id}/`), 'nothing of the upload is left in the store');

    const doomed = await it.node.post('/api/chats', { type: 'group', name: 'doomed', memberIds: [bob.userId] }, alice.jwt);
    const doomedId = doomed.body.chatId as string;
    const created = await it.node.post(`/api/chats/${doomedId}/uploads`, { name: 'r.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
    await fetch(created.body.upload.url, { method: 'PUT', headers: created.body.upload.headers, body: new Uint8Array(PDF) });
    await it.node.post(`/api/chats/${doomedId}/uploads/${created.body.uploadId}/finalize`, undefined, alice.jwt);
    await it.node.post(`/api/messages/${doomedId}`, { content: '', attachments: [created.body.uploadId] }, alice.jwt);
    const pdfUrl = (await it.node.get(`/api/chats/${doomedId}/attachments/${created.body.uploadId}`, bob.jwt)).body.url as string;
    t.equal((await it.node.del(`/api/chats/${doomedId}`, alice.jwt)).status, 204);
    t.ok(await fileGone(pdfUrl), "a deleted chat's files are deleted too");
    t.ok(await emptied(`a/${it.appId}/${doomedId}/`), 'nothing of the chat is left in the store');

    const settings = await it.node.put('/api/moderation/settings', { flagHideThreshold: 1 }, it.apiKey);
    t.equal(settings.status, 200, settings.text);
    const flagged = await upload(alice, PDF, 'flagged.pdf', 'application/pdf');
    const message = await it.node.post(`/api/messages/${chatId}`, { content: 'see attached', attachments: [flagged.body.id] }, alice.jwt);
    const flag = await it.node.post(`/api/messages/${chatId}/${message.body.message.messageId}/flags`, { reason: 'spam' }, bob.jwt);
    t.equal(flag.status, 201, flag.text);
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${flagged.body.id}`, bob.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, "a hidden message's files are hidden with it");
    const page = await it.node.get(`/api/messages/getMessages/${chatId}?size=1`, bob.jwt);
    t.notOk('attachments' in page.body.messages[0], 'and not shown in history');
    await it.node.put('/api/moderation/settings', { flagHideThreshold: 0 }, it.apiKey);
  });

  await t.test(`${name}: refused files: an executable named .png, a declared SVG, an oversized file, bytes not put`, async (t) => {
    const exe = await upload(alice, EXE_AS_PNG, 'cat.png', 'image/png');
    t.equal(exe.status, 415, exe.text);
    t.match(exe.body, { code: 'FILE_TYPE_REFUSED', errors: [{ path: '/file' }] });
    t.match(exe.body.detail, /application\/x-msdownload/);
    const svg = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'logo.svg', size: 100, type: 'image/svg+xml' }, alice.jwt);
    t.match(svg, { status: 415, body: { code: 'FILE_TYPE_REFUSED', errors: [{ path: '/body/type' }] } });
    const big = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'big.bin', size: MAX_BYTES + 1, type: 'application/octet-stream' }, alice.jwt);
    t.match(big, { status: 413, body: { code: 'FILE_TOO_LARGE', errors: [{ path: '/body/size' }] } }, 'refused before any byte is stored');
    const bad = await it.node.post(`/api/chats/${chatId}/uploads`, { name: '', size: 0 }, alice.jwt);
    t.equal(bad.status, 400);
    t.match(bad.body, { code: 'VALIDATION_FAILED' });
    const early = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'later.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
    const finalized = await it.node.post(`/api/chats/${chatId}/uploads/${early.body.uploadId}/finalize`, undefined, alice.jwt);
    t.match(finalized, { status: 409, body: { code: 'UPLOAD_INCOMPLETE' } }, 'finalize before the bytes');
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${early.body.uploadId}`, alice.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, 'nothing served before finalize');
  });
}

t.test('embedded store (files under DATA_DIR)', (t) => suite(t, 'local', {}));
t.test('an upload not sent within ATTACHMENT_UPLOAD_TTL_SECONDS is deleted; a deleted application\'s files too', async (t) => {
  const svc = await startService({ ATTACHMENT_UPLOAD_TTL_SECONDS: '2', ATTACHMENT_DELETE_DELAY_SECONDS: '1', ATTACHMENT_SWEEP_SECONDS: '1', USAGE_FLUSH_SECONDS: '1' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'att-ttl');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'ttl', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'late.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
  await fetch(created.body.upload.url, { method: 'PUT', headers: created.body.upload.headers, body: new Uint8Array(PDF) });
  const finalized = await it.node.post(`/api/chats/${chatId}/uploads/${created.body.uploadId}/finalize`, undefined, alice.jwt);
  t.equal(finalized.status, 200, finalized.text);
  t.equal(await it.storedFileBytes(PDF.length), PDF.length, "usage counts the finalized file's bytes");
  const mine = await it.node.get(`/api/chats/${chatId}/attachments/${created.body.uploadId}`, alice.jwt);
  t.equal(mine.status, 200, 'the uploader sees an upload not yet sent');
  t.match(await it.node.get(`/api/chats/${chatId}/attachments/${created.body.uploadId}`, bob.jwt), { status: 404 }, 'no one else does');
  await new Promise((r) => setTimeout(r, 2_200));
  const late = await it.node.post(`/api/messages/${chatId}`, { content: '', attachments: [created.body.uploadId] }, alice.jwt);
  t.match(late, { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, 'an expired upload is not sent');
  let status = 0;
  for (const until = Date.now() + 15_000; Date.now() < until && status !== 404; await new Promise((r) => setTimeout(r, 250))) {
    const res = await fetch(mine.body.url);
    status = res.status;
    await res.body?.cancel();
  }
  t.equal(status, 404, 'and its file is deleted');
  t.equal(await it.storedFileBytes(0), 0, 'and no longer counted');

  // A file sent in a message stays; deleting the application deletes it.
  const kept = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'kept.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
  await fetch(kept.body.upload.url, { method: 'PUT', headers: kept.body.upload.headers, body: new Uint8Array(PDF) });
  await it.node.post(`/api/chats/${chatId}/uploads/${kept.body.uploadId}/finalize`, undefined, alice.jwt);
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: '', attachments: [kept.body.uploadId] }, alice.jwt)).status, 201);
  await new Promise((r) => setTimeout(r, 3_500));
  const url = (await it.node.get(`/api/chats/${chatId}/attachments/${kept.body.uploadId}`, bob.jwt)).body.url as string;
  t.equal((await fetch(url)).status, 200, 'a sent file outlives its upload time');
  const removed = await it.control.del(`/api/client/apps/${it.appId}`, it.accessToken);
  t.equal(removed.status, 204, removed.text);
  status = 0;
  for (const until = Date.now() + 15_000; Date.now() < until && status !== 404; await new Promise((r) => setTimeout(r, 250))) {
    const res = await fetch(url);
    status = res.status;
    await res.body?.cancel();
  }
  t.equal(status, 404, "a deleted application's files are deleted");
});

const s3 = await requireService('objectstore', (line) => t.comment(line));
if (!s3) {
  t.comment('!!! attachments on S3 SKIPPED: no S3-compatible server (scripts/services.sh start objectstore) !!!');
  t.skip('object store not running', () => undefined);
} else {
  t.test('S3-compatible store', (t) =>
    suite(t, 's3', {
      ATTACHMENTS_STORE: 's3',
      S3_ENDPOINT: `http://${s3.host}:${s3.port}`,
      S3_BUCKET: 'chat-service-attachment-tests',
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
    }),
  );
}
