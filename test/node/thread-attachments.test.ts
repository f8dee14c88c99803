import sharp from 'sharp';
import t from 'tap';
import { integration, requireService, WsClient, type ChatUserSession } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Files in thread replies (README, "Threads", "Attachments"): a reply carries files as a send
// does; its files are served to the chat's members, held by the reply (not sent twice), hidden
// with it, and deleted with it; a reply shown in the chat carries them in both lists. The files
// live on the real S3-compatible server on both node stores (what a cluster runs with).
const s3 = await requireService('objectstore', (line) => t.comment(line));
if (s3)
  await onBothStores(
  t,
  'a reply carries files: served to members, held once, hidden and deleted with the reply',
  async (t, svc) => {
    const it = await integration(svc, 'thread-files');
    const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
    const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'thread files', memberIds: [ben.userId] }, ann.jwt)).body.chatId as string;
    const upload = async (who: ChatUserSession, bytes: Buffer, name: string, type: string) => {
      const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name, size: bytes.length, type }, who.jwt);
      t.equal(created.status, 201, created.text);
      const { upload: put, uploadId } = created.body as { uploadId: string; upload: { url: string; headers: Record<string, string> } };
      t.equal((await fetch(put.url, { method: 'PUT', headers: put.headers, body: new Uint8Array(bytes) })).status, 200, `${name}: stored`);
      const done = await it.node.post(`/api/chats/${chatId}/uploads/${uploadId}/finalize`, undefined, who.jwt);
      t.equal(done.status, 200, done.text);
      return done.body as { id: string; name: string; width?: number };
    };
    const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#36c' } }).png().toBuffer();
    const parent = (await it.node.post(`/api/messages/${chatId}`, { content: 'the plan' }, ann.jwt)).body.message;
    const ws = await WsClient.connect(svc.nodeUrl, ann.jwt);
    t.teardown(() => ws.close());

    const image = await upload(ben, png, 'sketch.png', 'image/png');
    const sent = await it.node.post(`/api/messages/${chatId}`, { content: '', parentId: parent.messageId, attachments: [image.id] }, ben.jwt);
    t.equal(sent.status, 201, sent.text);
    const reply = sent.body.message;
    t.match(reply, { parentId: parent.messageId, seq: 1, attachments: [{ id: image.id, name: 'sketch.png', width: 64, height: 48 }] }, 'a reply of files alone: the answer carries them');
    t.match((await ws.waitFor((f) => f.type === 'thread.reply' && f.message.messageId === reply.messageId)).message.attachments, [{ id: image.id }], 'and its event (to the parent’s author, who follows)');
    const [inThread] = (await it.node.get(`/api/chats/${chatId}/threads/${parent.messageId}/messages`, ann.jwt)).body.messages;
    t.match(inThread.attachments, [{ id: image.id }], 'the thread holds them');

    const access = await it.node.get(`/api/chats/${chatId}/attachments/${image.id}`, ann.jwt);
    t.equal(access.status, 200, access.text);
    const file = await fetch(access.body.url);
    t.same([file.status, Buffer.from(await file.arrayBuffer()).subarray(1, 4).toString()], [200, 'PNG'], 'another member downloads the file');
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${image.id}`, cat.jwt), { status: 404 }, 'a user not in the chat gets nothing');
    const twice = await it.node.post(`/api/messages/${chatId}`, { content: 'again', attachments: [image.id] }, ben.jwt);
    t.match(twice, { status: 409, body: { code: 'ATTACHMENT_IN_USE' } }, 'a reply holds its files: sending them again is refused');
    // Past its upload's time (ATTACHMENT_UPLOAD_TTL_SECONDS) and the sweeps after it, the reply still holds the file.
    await new Promise((r) => setTimeout(r, 5_500));
    const later = await it.node.get(`/api/chats/${chatId}/attachments/${image.id}`, ben.jwt);
    const kept = await fetch(later.body.url);
    await kept.body?.cancel();
    t.equal(kept.status, 200, "a reply's file outlives its upload time: the sweep finds the reply that holds it");

    // Shown in the chat too: both copies carry the file, and the chat's copy is what a change touches.
    const pdf = await upload(ann, Buffer.from('%PDF-1.4\n%%EOF\n'), 'brief.pdf', 'application/pdf');
    const shown = await it.node.post(`/api/messages/${chatId}`, { content: 'the brief', parentId: parent.messageId, showInChat: true, attachments: [pdf.id] }, ann.jwt);
    t.equal(shown.status, 201, shown.text);
    const history = (await it.node.get(`/api/messages/getMessages/${chatId}`, ben.jwt)).body.messages;
    t.match(history[0], { messageId: shown.body.message.messageId, attachments: [{ id: pdf.id }] }, "the chat's copy carries the file");
    t.equal((await it.node.get(`/api/chats/${chatId}/attachments/${pdf.id}`, ben.jwt)).status, 200, 'served to members');

    // Hidden with the reply (flagged past the threshold), served again once restored.
    t.equal((await it.node.put('/api/moderation/settings', { flagHideThreshold: 1 }, it.apiKey)).status, 200);
    t.equal((await it.node.post(`/api/messages/${chatId}/${reply.messageId}/flags`, { reason: 'spam' }, ann.jwt)).status, 201);
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${image.id}`, ann.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, "a hidden reply's files are hidden with it");
    await it.node.put('/api/moderation/settings', { flagHideThreshold: 0 }, it.apiKey);

    // Deleted with the reply: the file goes (ATTACHMENT_DELETE_DELAY_SECONDS later).
    const url = (await it.node.get(`/api/chats/${chatId}/attachments/${pdf.id}`, ann.jwt)).body.url as string;
    t.equal((await it.node.del(`/api/messages/${chatId}/${shown.body.message.messageId}`, ann.jwt)).status, 200, 'the reply shown in the chat is deleted');
    let status = 0;
    for (const until = Date.now() + 15_000; Date.now() < until && status !== 404; await new Promise((r) => setTimeout(r, 250))) {
      const res = await fetch(url);
      await res.body?.cancel();
      status = res.status;
    }
    t.equal(status, 404, "a deleted reply's file is deleted");
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${pdf.id}`, ann.jwt), { status: 404 }, 'and no longer served');
  },
  {
    ATTACHMENT_UPLOAD_TTL_SECONDS: '4',
    ATTACHMENT_DELETE_DELAY_SECONDS: '1',
    ATTACHMENT_SWEEP_SECONDS: '1',
    ATTACHMENTS_STORE: 's3',
    S3_ENDPOINT: `http://${s3.host}:${s3.port}`,
    S3_BUCKET: 'chat-service-thread-file-tests',
    S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
    S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
  },
);
else t.skip('files in replies: no S3-compatible server (scripts/services.sh start objectstore)', () => undefined);
