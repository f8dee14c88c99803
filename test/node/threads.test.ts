import t from 'tap';
import { integration, WsClient } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

// Threads (README, "Threads"): replies kept out of the chat's timeline, numbered in their thread,
// paged like history; the parent's summary after each reply on every member's socket.
await onBothStores(t, 'a thread of 30 replies pages back in tens with no gap or duplicate; the summary reaches every member', async (t, svc) => {
  const it = await integration(svc, 'threads');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'threads', memberIds: [ben.userId, cat.userId] }, ann.jwt)).body;
  const post = (body: object, jwt: string) => it.node.post(`/api/messages/${chat.chatId}`, body, jwt);
  const parent = (await post({ content: 'the plan' }, ann.jwt)).body.message;
  const sockets = await Promise.all([ann, ben, cat].map((u) => WsClient.connect(svc.nodeUrl, u.jwt)));
  t.teardown(() => Promise.all(sockets.map((s) => s.close())));

  const authors = [ben, cat, ann];
  const replies = [];
  for (let i = 1; i <= 30; i++) {
    const r = await post({ content: `reply ${i}`, parentId: parent.messageId, idempotencyKey: `r${i}` }, authors[i % 3]!.jwt);
    if (r.status !== 201) throw new Error(`reply ${i}: ${r.text}`);
    replies.push(r.body.message);
    // The parent's summary right after each reply, on every member's socket.
    const summaries = await Promise.all(sockets.map((s) => s.waitFor((f) => f.type === 'thread.updated' && f.parentId === parent.messageId && f.thread.replyCount === i)));
    if (i === 1 || i === 30) t.ok(summaries.every((f) => f.seq === parent.seq), `reply ${i}: every member has the summary`);
  }
  t.same(replies.map((r) => r.seq), Array.from({ length: 30 }, (_, i) => i + 1), 'replies are numbered 1…30 in their thread');
  t.ok(replies.every((r) => r.parentId === parent.messageId && r.chatId === chat.chatId), 'each names its chat and its parent');
  const retry = await post({ content: 'reply 30', parentId: parent.messageId, idempotencyKey: 'r30' }, authors[30 % 3]!.jwt);
  t.same([retry.status, retry.body.message.messageId], [200, replies[29].messageId], 'a retry with the same key returns the same reply');

  const seen: number[] = [];
  let cursor = '';
  for (let page = 0; page < 5; page++) {
    const r = await it.node.get(`/api/chats/${chat.chatId}/threads/${parent.messageId}/messages?size=10&lastReply=${cursor}`, cat.jwt);
    t.equal(r.status, 200);
    if (r.body.messages.length === 0) break;
    seen.push(...r.body.messages.map((m: { seq: number }) => m.seq));
    cursor = r.body.messages.at(-1).messageId;
  }
  t.same(seen, Array.from({ length: 30 }, (_, i) => 30 - i), 'paged back in tens: 30…1, each once');

  const history = (await it.node.get(`/api/messages/getMessages/${chat.chatId}`, ben.jwt)).body.messages;
  t.same(history.map((m: { messageId: string }) => m.messageId), [parent.messageId], "the chat's timeline holds the parent only");
  t.same(history[0].thread.replyCount, 30, 'with its summary');
  t.same(history[0].thread.participants, [cat.userId, ann.userId, ben.userId], 'the participants, in the order they first replied');
  t.equal((await it.node.get(`/api/chats/${chat.chatId}`, ben.jwt)).body.lastSeq, 1, 'replies take no seq of the chat');
  const live = await sockets[1]!.waitFor((f) => f.type === 'thread.reply' && f.seq === 30);
  t.same(live.message.content, 'reply 30', 'members receive each reply (thread.reply)');

  // A reply's edit, reaction and deletion: found by its id, written in its thread, announced.
  const firstReply = replies[0];
  const firstAuthor = authors[1]!;
  const edited = await it.node.put(`/api/messages/${chat.chatId}/${firstReply.messageId}`, { content: 'reply 1, edited' }, firstAuthor.jwt);
  t.same([edited.status, edited.body.message.content, edited.body.message.seq, edited.body.message.parentId], [200, 'reply 1, edited', 1, parent.messageId], 'the author edits a reply');
  t.same((await sockets[0]!.waitFor((f) => f.type === 'message.edited' && f.message.messageId === firstReply.messageId)).message.content, 'reply 1, edited', 'announced');
  const reacted = await it.node.post(`/api/messages/${chat.chatId}/${firstReply.messageId}/reactions`, { reaction: '👍' }, ben.jwt);
  t.same(reacted.body.message.reactionCounts, { '👍': 1 }, 'a reply takes reactions');
  t.equal((await sockets[2]!.waitFor((f) => f.type === 'reaction.added' && f.reaction.messageId === firstReply.messageId)).reaction.chatId, chat.chatId, 'announced with its chat');
  const removed = await it.node.del(`/api/messages/${chat.chatId}/${replies[1].messageId}`, ann.jwt);
  t.same([removed.status, removed.body.message.deleted], [200, true], 'the chat owner deletes a reply');
  const page = (await it.node.get(`/api/chats/${chat.chatId}/threads/${parent.messageId}/messages?size=30`, ben.jwt)).body.messages;
  const bySeq = new Map(page.map((m: { seq: number }) => [m.seq, m]));
  t.same([(bySeq.get(1) as { content: string }).content, (bySeq.get(2) as { deleted: boolean }).deleted, page.length], ['reply 1, edited', true, 30], 'the thread shows the edit and the tombstone, still 30 replies');

  const nested = await post({ content: 'deeper', parentId: replies[0].messageId }, ben.jwt);
  t.same([nested.status, nested.body.errors?.[0]?.path], [404, '/body/parentId'], 'a reply is not a parent: no nesting');
  await it.node.del(`/api/messages/${chat.chatId}/${parent.messageId}`, ann.jwt);
  t.equal((await post({ content: 'late', parentId: parent.messageId }, ben.jwt)).body.code, 'MESSAGE_DELETED', 'no reply to a deleted message');
  t.equal((await it.node.get(`/api/chats/${chat.chatId}/threads/${parent.messageId}/messages`, (await it.user('out')).jwt)).status, 404, 'a non-member reads no thread');

  // A blocked user's reply is refused as its sends are.
  const direct = (await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body;
  const first = (await it.node.post(`/api/messages/${direct.chatId}`, { content: 'hi' }, ann.jwt)).body.message;
  await it.node.post('/api/users/me/blocks', { userId: ann.userId }, ben.jwt);
  const blocked = await it.node.post(`/api/messages/${direct.chatId}`, { content: 'reply', parentId: first.messageId }, ann.jwt);
  const plain = await it.node.post(`/api/messages/${direct.chatId}`, { content: 'send' }, ann.jwt);
  t.same([blocked.status, blocked.body.code], [plain.status, plain.body.code], `a reply between blocked users is refused as a send is (${plain.body.code})`);
});
