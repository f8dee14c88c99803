import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ApiError } from '../../common/index.ts';
import { ActorRegistry, ChatService, type AttachmentPort, type BeforeSendPort, type EventSink, type SendResult } from '../../node/chat/index.ts';
import type { Chat, StoredAttachment } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

/**
 * The before-send hook is asked about a send with files knowing what they are: the chat service
 * hands the hook's port the finalized attachments' metadata (AttachmentPort.describe), in the
 * order the send names them, not only their ids. A send naming a file it may not carry is refused
 * as the actor would refuse it, without asking the hook.
 */
const appId = randomUUID();
const member = randomUUID();
const at = new Date().toISOString();
const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: member, createdAt: at, updatedAt: at, lastSeq: 0, lastActivityAt: at };
const photo: StoredAttachment = { id: randomUUID(), name: 'photo.jpg', size: 48_213, type: 'image/jpeg', width: 640, height: 480, placeholder: 'AAAA', thumbnail: { width: 320, height: 240, type: 'image/webp' } };
const report: StoredAttachment = { id: randomUUID(), name: 'report.pdf', size: 1_024, type: 'application/pdf' };
const finalized = new Map([photo, report].map((a) => [a.id, a]));

/** Finalized uploads of `member` in `chat`, as node/files answers for them. */
const files: AttachmentPort = {
  describe: async (c) => {
    const found = c.uploadIds.map((id) => finalized.get(id));
    const missing = found.findIndex((a) => a === undefined || c.senderId !== member);
    return missing >= 0 ? ApiError.field('ATTACHMENT_NOT_FOUND', `/attachments/${missing}`, 'no finalized upload of yours in this chat') : (found as StoredAttachment[]);
  },
  claim: async (c) => c.uploadIds.map((id) => finalized.get(id)!),
  messageDeleting: async () => undefined,
  chatDeleting: async () => undefined,
};

const asked: { files: readonly StoredAttachment[] | undefined; ids: readonly string[] | undefined }[] = [];
const hook = { url: 'https://hooks.example/before-send', timeoutMs: 500, failurePolicy: 'closed' as const, secret: 'whsec_x' };
const beforeSend: BeforeSendPort = {
  hookOf: () => hook,
  ask: async (_hook, _p, _chatId, input, given) => {
    asked.push({ files: given, ids: input.attachments });
    return input;
  },
};

const fake = new MemoryNodeStore();
await fake.store.chats.create(chat, [{ appId, chatId: chat.id, userId: member, role: 'owner', joinedAt: at, readSeq: 0 }]);
const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
const actors = new ActorRegistry({ store: fake.store, events: sink, now: () => new Date(), attachments: files }, { idleMs: 60_000 });
const chats = new ChatService({ store: fake.store, actors, now: () => new Date(), beforeSend });
const p = { appId, userId: member };

t.test('the hook is given the metadata of the files a send carries, in the order named', async (t) => {
  asked.length = 0;
  const sent = await chats.send(p, chat.id, { content: '', attachments: [report.id, photo.id] });
  t.notOk(sent instanceof ApiError, String(sent));
  t.same((sent as SendResult).message.attachments, [report, photo], 'the message carries them');
  t.same(asked, [{ files: [report, photo], ids: [report.id, photo.id] }], 'the hook saw what they are: name, size, type, and an image its width and height');
});

t.test('a send without files gives the hook none', async (t) => {
  asked.length = 0;
  await chats.send(p, chat.id, { content: 'plain' });
  t.same(asked, [{ files: undefined, ids: undefined }]);
});

t.test('a send naming no finalized upload of the sender is refused without asking the hook', async (t) => {
  asked.length = 0;
  const refused = await chats.send(p, chat.id, { content: 'x', attachments: [photo.id, randomUUID()] });
  t.ok(refused instanceof ApiError, 'refused');
  t.match((refused as ApiError).toProblem(), { code: 'ATTACHMENT_NOT_FOUND', errors: [{ path: '/attachments/1' }] }, 'naming the file');
  t.same(asked, [], 'the hook was not asked');
});
