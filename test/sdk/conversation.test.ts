import t from 'tap';
import { ChatApiError, type Message } from 'chat-service/client';
import { sdkApp } from '../helpers/sdk-app.ts';

/** The SDK's conversation model: custom data on users, chats and messages, and the backend's system messages. */
const { server, client } = await sdkApp(t, 'conversation');

t.test('data on users, chats and messages, and a system message from the backend', async (t) => {
  const alice = await server.registerUser({ username: `alice-${process.pid}`, data: { plan: 'pro' } });
  t.same(alice.data, { plan: 'pro' }, 'registerUser takes data');
  t.same((await server.updateUser(alice.userId, { data: { plan: 'team' } })).data, { plan: 'team' }, 'updateUser replaces it');
  t.same((await server.getUser(alice.userId)).displayName, alice.displayName, 'and keeps the display name');
  const bob = await server.registerUser({ username: `bob-${process.pid}` });
  const [A, B] = [await client(t, alice.userId), await client(t, bob.userId)];
  const chat = await A.createGroup('Launch', [bob.userId], { topic: 'v1' });
  t.same(chat.data, { topic: 'v1' }, 'createGroup takes data');
  t.same((await A.updateChat(chat.chatId, { data: { topic: 'v2' } })).data, { topic: 'v2' }, 'updateChat replaces it');
  t.same((await B.directChat(alice.userId, { note: 'hi' })).data, { note: 'hi' }, 'directChat takes data');

  const received = new Promise<Message>((resolve) => {
    const off = B.on('message.new', (e) => {
      if (e.message.type === 'system') resolve(e.message), off();
    });
  });
  const sent = await A.send(chat.chatId, 'vote', { data: { poll: 'p1' } });
  t.same([sent.data, sent.type], [{ poll: 'p1' }, 'regular'], 'send takes data');
  const edited = await A.edit(chat.chatId, sent.messageId, { data: { poll: 'p2' } });
  t.same([edited.content, edited.data], ['vote', { poll: 'p2' }], 'edit takes data alone');
  t.equal((await A.edit(chat.chatId, sent.messageId, 'vote!')).content, 'vote!', 'and content alone, as before');

  const notice = await server.sendMessage(chat.chatId, { senderId: alice.userId, content: 'Alice started a poll', type: 'system', data: { poll: 'p2' } });
  t.same([notice.type, notice.senderId], ['system', alice.userId], 'sendMessage sends a system message for a member');
  t.equal((await received).messageId, notice.messageId, 'members receive it');
  const refused = await A.edit(chat.chatId, notice.messageId, 'changed').catch((e: unknown) => e);
  t.ok(refused instanceof ChatApiError && refused.code === 'NOT_ALLOWED', 'nobody edits it');
});

t.test('mentions and pins through the SDK', async (t) => {
  const [ann, ben] = [await server.registerUser({ username: `ann-${process.pid}` }), await server.registerUser({ username: `ben-${process.pid}` })];
  const [A, B] = [await client(t, ann.userId), await client(t, ben.userId)];
  const chat = await A.createGroup('Pins', [ben.userId]);
  const pinnedEvent = new Promise<string>((resolve) => {
    const off = B.on('message.pinned', (e) => (resolve(e.pin.messageId), off()));
  });
  const m = await A.send(chat.chatId, '@ben the plan', { mentions: [ben.userId] });
  t.same(m.mentions, [ben.userId], 'send takes mentions');
  t.equal((await B.getChat(chat.chatId)).mentionCount, 1, "ben's chat counts the mention");
  const pin = await A.pin(chat.chatId, m.messageId);
  t.match(pin, { messageId: m.messageId, pinnedBy: ann.userId });
  t.equal(await pinnedEvent, m.messageId, 'message.pinned reaches the members');
  t.same((await B.pins(chat.chatId)).map((p) => p.message.content), ['@ben the plan'], 'pins lists it with its message');
  await A.unpin(chat.chatId, m.messageId);
  t.same(await B.pins(chat.chatId), [], 'unpin takes it off');
  const refused = await B.pin(chat.chatId, m.messageId).catch((e: unknown) => e);
  t.ok(refused instanceof ChatApiError && refused.code === 'NOT_ALLOWED', 'a plain member of a group does not pin');
});
