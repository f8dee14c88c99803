import { randomBytes } from 'node:crypto';
import t from 'tap';
import { ChatApiError, ChatClient, ChatStateError } from 'chat-service/client';
import { sdkApp } from '../helpers/sdk-app.ts';

/**
 * The SDK's large files: uploadFile puts a file over 8 MiB in parts, with progress over the whole
 * file; one interrupted is finished by resumeUpload, which puts only the parts the service lacks.
 */
const PART = 8 * 1024 * 1024;
const { endpoint, server } = await sdkApp(t, 'big files');
const alice = await server.registerUser({ username: `alice-${process.pid}` });
const session = await server.signIn({ userId: alice.userId });

/** A client whose PUTs are recorded, and refused (403, as an expired URL is) while `refuse` says so. */
function client(refuse: (put: number) => boolean = () => false) {
  const puts: number[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    if (init?.method === 'PUT') {
      puts.push(Number(new Headers(init.headers).get('content-length') ?? (init.body as Blob).size));
      if (refuse(puts.length)) return new Response('<Error><Code>AccessDenied</Code></Error>', { status: 403 });
    }
    return fetch(input, init);
  };
  const c = new ChatClient({ baseUrl: endpoint, fetch: fetchImpl });
  c.setAuth(session);
  return { c, puts };
}

const file = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2 * PART + 5000 - 9)]);

t.test('uploadFile: a file over 8 MiB goes in parts, with progress over the whole file', async (t) => {
  const { c, puts } = client();
  const chat = await c.createGroup('Big', []);
  const progress: number[] = [];
  const attachment = await c.uploadFile(chat.chatId, new Uint8Array(file), { name: 'big.pdf', onProgress: (sent, total) => total === file.length && progress.push(sent) });
  t.match(attachment, { name: 'big.pdf', size: file.length, type: 'application/pdf' });
  t.same(puts.length, 3, 'three PUTs: one per part');
  t.same(progress.at(-1), file.length, 'progress ends at the whole file');
  t.ok(progress.every((p, i) => i === 0 || p >= progress[i - 1]!), 'and never goes back');
  const got = Buffer.from(await (await fetch((await c.attachmentUrls(chat.chatId, attachment.id)).url)).arrayBuffer());
  t.ok(got.equals(file), 'stored byte for byte');
});

t.test('resumeUpload: an upload interrupted at its second part is finished, putting only what is missing', async (t) => {
  let uploadId = '';
  const broken = client((n) => n === 2);
  const chat = await broken.c.createGroup('Resumed', []);
  const failed = await broken.c.uploadFile(chat.chatId, new Uint8Array(file), { name: 'big.pdf', onUploadId: (id) => (uploadId = id) }).catch((e: unknown) => e);
  t.ok(failed instanceof ChatApiError, 'the upload stops at the refused part');
  t.match(uploadId, /^[0-9a-f-]{36}$/, 'its id was given before');

  const { c, puts } = client();
  const other = await c.resumeUpload(chat.chatId, uploadId, new Uint8Array(10)).catch((e: unknown) => e);
  t.ok(other instanceof ChatStateError, 'another file (of another size) is refused, nothing put');
  t.same(puts, []);
  const progress: number[] = [];
  const attachment = await c.resumeUpload(chat.chatId, uploadId, new Uint8Array(file), { onProgress: (sent) => progress.push(sent) });
  t.match(attachment, { id: uploadId, size: file.length, type: 'application/pdf' });
  t.same(puts, [PART, 5000], 'only parts 2 and 3 are put: part 1 arrived before the interruption');
  t.equal(progress[0], PART, 'progress starts at what the service had');
  const got = Buffer.from(await (await fetch((await c.attachmentUrls(chat.chatId, attachment.id)).url)).arrayBuffer());
  t.ok(got.equals(file), 'stored byte for byte');

  t.same(await c.resumeUpload(chat.chatId, uploadId, new Uint8Array(file)), attachment, 'resuming a finalized upload: its attachment, nothing put');
  t.equal(puts.length, 2);
  const unknown = await c.resumeUpload(chat.chatId, crypto.randomUUID(), new Uint8Array(file)).catch((e: unknown) => e);
  t.ok(unknown instanceof ChatApiError && unknown.code === 'UPLOAD_NOT_FOUND', 'an unknown upload: UPLOAD_NOT_FOUND');
});
