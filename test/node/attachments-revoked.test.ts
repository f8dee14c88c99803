import t from 'tap';
import { finalizeUpload, integration, putUpload, startService } from '../helpers/index.ts';

/**
 * On the embedded store the node serves downloads itself, and checks at each one that the file is
 * still shown: a URL handed out while its message was shown is refused (404 FILE_NOT_FOUND) once
 * the message is hidden by flags (its file is kept, for review) or deleted, or its chat deleted: at
 * once, whether or not the deletion of its files has happened yet. An S3 presigned URL cannot be
 * called back: it works until it expires (README).
 */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

const svc = await startService({});
t.teardown(() => svc.stop());
const it = await integration(svc, 'revoked');
const [alice, bob] = [await it.user('alice'), await it.user('bob')];
const chat = async () => (await it.node.post('/api/chats', { type: 'group', name: 'revoked', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;

/** A PDF sent by alice in `chatId`: its message id, and the URL bob got while it was shown. */
async function sent(chatId: string) {
  const uploadId = await putUpload(it.node, alice.jwt, chatId, new Uint8Array(PDF), 'report.pdf', 'application/pdf');
  t.equal((await finalizeUpload(it.node, alice.jwt, chatId, uploadId)).status, 200);
  const message = await it.node.post(`/api/messages/${chatId}`, { content: 'the report', attachments: [uploadId] }, alice.jwt);
  t.equal(message.status, 201, message.text);
  const access = await it.node.get(`/api/chats/${chatId}/attachments/${uploadId}`, bob.jwt);
  t.equal(access.status, 200, access.text);
  const served = await fetch(access.body.url);
  t.same(Buffer.from(await served.arrayBuffer()), PDF, 'the URL serves the file while the message is shown');
  return { messageId: message.body.message.messageId as string, url: access.body.url as string };
}

const refused = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as { code?: string } };
};

t.test('a hidden message: its file URL handed out before is refused', async (t) => {
  const chatId = await chat();
  t.equal((await it.node.put('/api/moderation/settings', { flagHideThreshold: 1 }, it.apiKey)).status, 200);
  t.teardown(() => it.node.put('/api/moderation/settings', { flagHideThreshold: 0 }, it.apiKey));
  const { messageId, url } = await sent(chatId);
  const flag = await it.node.post(`/api/messages/${chatId}/${messageId}/flags`, { reason: 'spam' }, bob.jwt);
  t.equal(flag.status, 201, flag.text);
  t.match(await refused(url), { status: 404, body: { code: 'FILE_NOT_FOUND' } });
});

t.test('a deleted message: its file URL handed out before is refused', async (t) => {
  const chatId = await chat();
  const { messageId, url } = await sent(chatId);
  t.equal((await it.node.del(`/api/messages/${chatId}/${messageId}`, alice.jwt)).status, 200);
  t.match(await refused(url), { status: 404, body: { code: 'FILE_NOT_FOUND' } });
});

t.test('a deleted chat: its files URLs handed out before are refused', async (t) => {
  const chatId = await chat();
  const { url } = await sent(chatId);
  t.equal((await it.node.del(`/api/chats/${chatId}`, alice.jwt)).status, 204);
  t.match(await refused(url), { status: 404, body: { code: 'FILE_NOT_FOUND' } });
});
