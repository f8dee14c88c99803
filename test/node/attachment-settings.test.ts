import sharp from 'sharp';
import t from 'tap';
import { ChatApiError, ManagementClient } from 'chat-service/management';
import { client, integration, newAccount, startService, type ChatUserSession } from '../helpers/index.ts';

/**
 * An application's attachment settings (README, "Attachments"), set through the management API
 * and applied by the node: a smaller largest file, a total, accepted and refused types. Each
 * narrows the deployment's limits, never widens them; a change applies to the next upload.
 */
const DEPLOYMENT_MAX = 100_000;
const DEPLOYMENT_TOTAL = 1_000_000;
/** A PDF of `size` bytes (its magic number makes the type). */
const pdf = (size: number) => Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(size - 9, 0x20)]);

t.test('attachment settings through the management API, applied by the node', async (t) => {
  // Settings are trusted for 1 s: the test asks again within it, so only the announcement of a change makes it apply.
  const svc = await startService({ ATTACHMENT_MAX_BYTES: String(DEPLOYMENT_MAX), ATTACHMENT_APP_MAX_TOTAL_BYTES: String(DEPLOYMENT_TOTAL), ATTACHMENT_REFUSED_TYPES: 'video/*', KEY_STATUS_TTL_MS: '1000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'att-settings');
  const alice = await it.user('alice');
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'files', memberIds: [] }, alice.jwt)).body.chatId as string;
  const path = `/api/client/apps/${it.appId}/attachment-settings`;
  const set = (body: unknown) => it.control.put(path, body, it.accessToken);
  const ask = (who: ChatUserSession, size: number, type?: string) => it.node.post(`/api/chats/${chatId}/uploads`, { name: 'f', size, ...(type ? { type } : {}) }, who.jwt);
  /** Asks for an upload, puts `bytes`, finalizes: the finalize's answer (or the refused ask). */
  const upload = async (bytes: Buffer) => {
    const created = await ask(alice, bytes.length);
    if (created.status !== 201) return created;
    const put = await fetch(created.body.upload.url, { method: 'PUT', headers: created.body.upload.headers, body: new Uint8Array(bytes) });
    t.equal(put.status, 200, 'the bytes are stored');
    return it.node.post(`/api/chats/${chatId}/uploads/${created.body.uploadId}/finalize`, undefined, alice.jwt);
  };

  await t.test('read and validated: defaults, the deployment’s ceilings, one error shape naming the field', async (t) => {
    const got = await it.control.get(path, it.accessToken);
    t.equal(got.status, 200, got.text);
    t.same(got.body.settings, {}, 'nothing set at first');
    t.notOk('updatedAt' in got.body);
    t.match(got.body.deployment, { maxFileBytes: DEPLOYMENT_MAX, maxTotalBytes: DEPLOYMENT_TOTAL });
    t.ok(got.body.deployment.refusedTypes.includes('image/svg+xml') && got.body.deployment.refusedTypes.includes('video/*'), 'the built-in refused types and ATTACHMENT_REFUSED_TYPES');

    t.match(await set({ maxFileBytes: DEPLOYMENT_MAX + 1 }), { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/body/maxFileBytes', message: /at most 100000 .*ATTACHMENT_MAX_BYTES/ }] } }, 'past the deployment’s largest file');
    t.match(await set({ maxTotalBytes: DEPLOYMENT_TOTAL + 1 }), { status: 400, body: { errors: [{ path: '/body/maxTotalBytes', message: /ATTACHMENT_APP_MAX_TOTAL_BYTES/ }] } }, 'past the deployment’s total');
    t.match(await set({ allowedTypes: ['image/'] }), { status: 400, body: { code: 'VALIDATION_FAILED', errors: [{ path: '/body/allowedTypes/0' }] } }, 'a malformed type');
    t.match(await set({ allowedTypes: [] }), { status: 400, body: { errors: [{ path: '/body/allowedTypes' }] } }, 'an empty allow-list would accept nothing: refused');
    t.match(await set({ refusedTypes: Array.from({ length: 51 }, (_, i) => `application/x-${i}`) }), { status: 400, body: { errors: [{ path: '/body/refusedTypes' }] } }, 'at most 50 types');
    t.match(await set({ maxFileBytes: 0 }), { status: 400, body: { errors: [{ path: '/body/maxFileBytes' }] } });
    t.match(await set({ maxfilebytes: 10 }), { status: 400, body: { code: 'VALIDATION_FAILED' } }, 'an unknown field');
    t.equal((await it.control.put(path, {}, undefined)).status, 401, 'no token');
    const stranger = (await client(svc.controlUrl).post('/api/auth/register', newAccount('att-stranger'))).body.accessToken as string;
    t.match(await it.control.put(path, {}, stranger), { status: 404, body: { code: 'APP_NOT_FOUND' } }, "another account's application");
    t.match(await it.control.get(path, stranger), { status: 404, body: { code: 'APP_NOT_FOUND' } });
    t.same((await it.control.get(path, it.accessToken)).body.settings, {}, 'nothing refused was stored');
  });

  await t.test('a smaller largest file, applied to the very next upload', async (t) => {
    t.equal((await ask(alice, 5000)).status, 201, 'the deployment allows 5,000 bytes (and this node has now read the settings)');
    const changed = await set({ maxFileBytes: 4000 });
    t.equal(changed.status, 200, changed.text);
    t.same(changed.body.settings, { maxFileBytes: 4000 });
    t.match(changed.body.updatedAt, /^\d{4}-\d\d-\d\dT/);
    t.match(await ask(alice, 4001), { status: 413, body: { code: 'FILE_TOO_LARGE', errors: [{ path: '/body/size', message: 'must be at most 4000' }] } }, 'refused before any byte is stored, at once');
    t.equal((await ask(alice, 4000)).status, 201, 'exactly the limit is allowed');
  });

  await t.test('accepted and refused types: the declared type when asked, the sniffed one at finalize', async (t) => {
    t.equal((await set({ allowedTypes: ['image/*'] })).status, 200);
    t.match(await ask(alice, 100, 'application/pdf'), { status: 415, body: { code: 'FILE_TYPE_REFUSED', errors: [{ path: '/body/type', message: /not one of the application's allowedTypes/ }] } }, 'a declared PDF is refused at once');
    const undeclared = await upload(pdf(2000));
    t.match(undeclared, { status: 415, body: { code: 'FILE_TYPE_REFUSED', errors: [{ path: '/file', message: /application\/pdf/ }] } }, 'undeclared PDF bytes are refused at finalize');
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#36c' } }).png().toBuffer();
    const image = await upload(png);
    t.match(image, { status: 200, body: { type: 'image/png', thumbnail: { type: 'image/webp' } } }, 'an image is accepted');

    t.equal((await set({ refusedTypes: ['image/png'] })).status, 200, 'allowedTypes dropped by the replacing set; PNG refused');
    t.match(await upload(png), { status: 415, body: { errors: [{ path: '/file', message: 'type image/png is refused' }] } });
    t.equal((await upload(pdf(2000))).status, 200, 'a PDF is accepted again');
    t.match(await ask(alice, 100, 'video/mp4'), { status: 415 }, 'the deployment’s ATTACHMENT_REFUSED_TYPES still apply');
    t.match(await set({ allowedTypes: ['image/svg+xml'] }), { status: 200 }, 'an application may name a type the deployment refuses…');
    t.match(await ask(alice, 100, 'image/svg+xml'), { status: 415, body: { errors: [{ path: '/body/type', message: 'type image/svg+xml is refused' }] } }, '…and it stays refused');
  });

  await t.test('a total of the application’s own', async (t) => {
    // An application of its own: the uploads above still hold what they declared.
    const other = await integration(svc, 'att-settings-total');
    const bob = await other.user('bob');
    const theirs = (await other.node.post('/api/chats', { type: 'group', name: 'total', memberIds: [] }, bob.jwt)).body.chatId as string;
    const askTheirs = (size: number) => other.node.post(`/api/chats/${theirs}/uploads`, { name: 'f', size }, bob.jwt);
    t.equal((await other.control.put(`/api/client/apps/${other.appId}/attachment-settings`, { maxTotalBytes: 3000 }, other.accessToken)).status, 200);
    const first = await askTheirs(2000);
    t.equal(first.status, 201, first.text);
    t.match(await askTheirs(2000), { status: 413, body: { code: 'STORAGE_QUOTA_EXCEEDED', errors: [{ path: '/body/size', message: /at most 1000 .*3000/ }] } }, 'its open uploads count against 3,000');
    t.equal((await askTheirs(1000)).status, 201, 'exactly what is left is allowed');
    t.equal((await other.control.put(`/api/client/apps/${other.appId}/attachment-settings`, {}, other.accessToken)).status, 200, '`{}` restores the deployment’s limits');
    t.equal((await askTheirs(50_000)).status, 201, 'back to the deployment’s total');
  });

  await t.test('ManagementClient: getAttachmentSettings and setAttachmentSettings', async (t) => {
    const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
    await mgmt.register(newAccount('sdk-att-settings'));
    const app = await mgmt.createApplication('SDK attachment settings');
    t.match(await mgmt.getAttachmentSettings(app.id), { settings: {}, deployment: { maxFileBytes: DEPLOYMENT_MAX } });
    t.match(await mgmt.setAttachmentSettings(app.id, { maxFileBytes: 10, allowedTypes: ['image/*'] }), { settings: { maxFileBytes: 10, allowedTypes: ['image/*'] }, updatedAt: String });
    t.match(await mgmt.getAttachmentSettings(app.id), { settings: { maxFileBytes: 10, allowedTypes: ['image/*'] } });
    const refused = await mgmt.setAttachmentSettings(app.id, { maxFileBytes: DEPLOYMENT_MAX * 2 }).catch((e: unknown) => e);
    t.ok(refused instanceof ChatApiError && refused.code === 'VALIDATION_FAILED', 'past the deployment: VALIDATION_FAILED');
  });
});
