import t from 'tap';
import { startService, integration, type ChatUserSession } from '../helpers/index.ts';

/**
 * ATTACHMENT_APP_MAX_TOTAL_BYTES: an application's stored attachment bytes plus its open uploads
 * never pass the limit; a refusal names the field and says what is left; bytes count again once
 * the sweep deletes their file; another application has a limit of its own.
 */
const LIMIT = 5000;
/** A PDF of `size` bytes (its magic number makes the type; no thumbnail). */
const pdf = (size: number) => Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(size - 9, 0x20)]);

t.test('an application stores at most ATTACHMENT_APP_MAX_TOTAL_BYTES of attachments', async (t) => {
  const svc = await startService({
    ATTACHMENT_APP_MAX_TOTAL_BYTES: String(LIMIT),
    USAGE_FLUSH_SECONDS: '1',
    ATTACHMENT_UPLOAD_TTL_SECONDS: '3',
    ATTACHMENT_DELETE_DELAY_SECONDS: '1',
    ATTACHMENT_SWEEP_SECONDS: '1',
  });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'quota');
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'files', memberIds: [bob.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const ask = (who: ChatUserSession, size: number, into = chatId, node = it.node) => node.post(`/api/chats/${into}/uploads`, { name: 'f.pdf', size, type: 'application/pdf' }, who.jwt);

  const first = await ask(alice, 3000);
  t.equal(first.status, 201, first.text);
  const over = await ask(bob, 3000);
  t.match(over, { status: 413, body: { code: 'STORAGE_QUOTA_EXCEEDED', errors: [{ path: '/body/size', message: /at most 2000 / }] } }, 'an open upload holds its size: another member is refused what would pass the limit');
  const fill = await ask(bob, 2000);
  t.equal(fill.status, 201, 'exactly up to the limit is allowed');
  t.match(await ask(alice, 1), { status: 413, body: { code: 'STORAGE_QUOTA_EXCEEDED' } }, 'one byte more is refused');

  // The first upload finalized: its bytes leave the open uploads and are counted as stored.
  const put = await fetch(first.body.upload.url, { method: 'PUT', headers: first.body.upload.headers, body: new Uint8Array(pdf(3000)) });
  t.equal(put.status, 200);
  const done = await it.node.post(`/api/chats/${chatId}/uploads/${first.body.uploadId}/finalize`, undefined, alice.jwt);
  t.equal(done.status, 200, done.text);
  t.match(await ask(alice, 1), { status: 413 }, 'right after the finalize: still full (counted here before any flush)');
  t.equal(await it.storedFileBytes(3000), 3000, 'the usage flush reached the store');
  t.match(await ask(alice, 1), { status: 413 }, 'after the usage flush: still full (counted in the store)');

  const other = await integration(svc, 'quota-other');
  const carol = await other.user('carol');
  const theirs = await other.node.post('/api/chats', { type: 'group', name: 'theirs', memberIds: [] }, carol.jwt);
  t.equal((await ask(carol, LIMIT, theirs.body.chatId as string, other.node)).status, 201, 'another application has a limit of its own');

  // Neither upload is sent in a message: both expire (3 s), the sweep deletes the stored file and
  // its usage goes down; the open upload's hold ends with its URL.
  let status = 0;
  for (let i = 0; i < 40 && status !== 201; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    status = (await ask(alice, LIMIT)).status;
  }
  t.equal(status, 201, 'once the sweep deleted the expired file, the whole limit is there again');
});

t.test('concurrent uploads cannot both take the last bytes', async (t) => {
  const svc = await startService({ ATTACHMENT_APP_MAX_TOTAL_BYTES: String(LIMIT) });
  t.teardown(() => svc.stop());
  const it = await integration(svc, 'quota-race');
  const alice = await it.user('alice');
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'race', memberIds: [] }, alice.jwt);
  // Six asked for at once, 2,000 bytes each, against 5,000: exactly two fit.
  const answers = await Promise.all(Array.from({ length: 6 }, () => it.node.post(`/api/chats/${chat.body.chatId}/uploads`, { name: 'f.pdf', size: 2000, type: 'application/pdf' }, alice.jwt)));
  t.same(answers.map((a) => a.status).sort(), [201, 201, 413, 413, 413, 413], 'two taken, four refused');
});
