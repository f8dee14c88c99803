import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ApiError } from '../../common/index.ts';
import { WindowLimiter } from '../../common/limits/index.ts';
import { ActorRegistry, AppActionBudget, ChatService, SendAdmission, type EventSink, type SendResult } from '../../node/chat/index.ts';
import type { Chat } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

/**
 * A new message is admitted once, by the chat service of the node that takes it, REST and WebSocket
 * alike (chat/send-admission.ts): the application's budget, then the user's rate, then the load
 * shedder, each refusing with RATE_LIMITED before any work; a send taken reports to the shedder
 * whether it was served.
 */
function setup(options: { userSends?: number; appActions?: number; shed?: boolean } = {}) {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const [member, outsider] = [randomUUID(), randomUUID()];
  const now = new Date().toISOString();
  const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: member, createdAt: now, updatedAt: now, lastSeq: 0, lastActivityAt: now };
  void fake.store.chats.create(chat, [{ appId, chatId: chat.id, userId: member, role: 'owner', joinedAt: now, readSeq: 0 }]);
  const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const actors = new ActorRegistry({ store: fake.store, events: sink, now: () => new Date() }, { idleMs: 60_000 });
  const shedder = { begun: 0, ended: [] as boolean[], shedding: options.shed === true };
  let shed = 0;
  const admission = new SendAdmission({
    appActions: new AppActionBudget(options.appActions ?? 1000),
    userSends: new WindowLimiter(options.userSends ?? 100, 60_000),
    userSendsPerSecond: options.userSends ?? 100,
    shedder: {
      begin: () => {
        if (shedder.shedding) return undefined;
        shedder.begun++;
        return (served?: boolean) => void shedder.ended.push(served === true);
      },
    },
    onShed: () => void shed++,
  });
  const chats = new ChatService({ store: fake.store, actors, now: () => new Date(), admission });
  return { chats, chat, shedder, shed: () => shed, member: { appId, userId: member }, outsider: { appId, userId: outsider } };
}

t.test('send admission: a taken send tells the shedder whether it was served', async (t) => {
  const { chats, chat, shedder, member, outsider } = setup();
  const sent = await chats.send(member, chat.id, { content: 'hello' });
  t.notOk(sent instanceof ApiError, 'a member’s send is stored');
  t.equal((sent as SendResult).message.content, 'hello');
  const refused = await chats.send(outsider, chat.id, { content: 'hello' });
  t.equal(refused instanceof ApiError && refused.code, 'CHAT_NOT_FOUND', 'a non-member’s is refused by the chat');
  t.same(shedder.ended, [true, false], 'served, then not served');
  t.equal(shedder.begun, 2);
});

t.test('send admission: the user’s rate refuses at once, before the shedder counts anything', async (t) => {
  const { chats, chat, shedder, member } = setup({ userSends: 2 });
  for (let i = 0; i < 2; i++) t.notOk((await chats.send(member, chat.id, { content: `m${i}` })) instanceof ApiError);
  const third = await chats.send(member, chat.id, { content: 'm2' });
  t.ok(third instanceof ApiError && third.code === 'RATE_LIMITED', 'the third in the window is refused');
  t.match((third as ApiError).detail, /at most 2 messages per second per user/);
  t.equal(shedder.begun, 2, 'the refused send never reached the shedder');
});

t.test('send admission: the application’s budget comes first; a shedding node refuses with a retry hint', async (t) => {
  const spent = setup({ appActions: 1 });
  const results = await Promise.all(Array.from({ length: 25 }, (_, i) => spent.chats.send(spent.member, spent.chat.id, { content: `m${i}` })));
  t.ok(results.some((r) => r instanceof ApiError && r.code === 'RATE_LIMITED'), 'past the application’s burst, refused');
  t.equal(spent.shedder.begun, results.filter((r) => !(r instanceof ApiError)).length, 'only the sends taken reached the shedder');

  const shedding = setup({ shed: true });
  const r = await shedding.chats.send(shedding.member, shedding.chat.id, { content: 'x' });
  t.ok(r instanceof ApiError && r.code === 'RATE_LIMITED', 'refused');
  t.match((r as ApiError).detail, /overloaded/);
  t.equal((r as ApiError).extra.retryAfterSeconds, 1, 'retry after a second');
  t.equal(shedding.shed(), 1, 'counted as shed');
});
