import t from 'tap';
import type { ChatEvent } from 'chat-service/client';
import { sdkApp } from '../helpers/sdk-app.ts';

/** Threads through the SDK (README, "Threads"): replies, their pages, following, reading, the inbox. */
const { server, client } = await sdkApp(t, 'threads');

t.test('a thread through the SDK: replies sent and paged, followed, read, and listed in the inbox', async (t) => {
  const [ann, ben] = [await server.registerUser({ username: `ann-${process.pid}` }), await server.registerUser({ username: `ben-${process.pid}` })];
  const [A, B] = [await client(t, ann.userId), await client(t, ben.userId)];
  const chat = await A.createGroup('Threads', [ben.userId]);
  const parent = await A.send(chat.chatId, 'plan?');
  const summaries: ChatEvent[] = [];
  A.on('thread.updated', (e) => void summaries.push(e));
  const reads: number[] = [];
  A.on('thread.read', (e) => void reads.push(e.seq));

  const sent = [];
  for (let i = 1; i <= 12; i++) sent.push(await B.send(chat.chatId, `idea ${i}`, { parentId: parent.messageId }));
  t.same([sent[0]!.parentId, sent[11]!.seq], [parent.messageId, 12], 'send takes parentId: a reply, numbered in its thread');
  const page = await A.threads.replies(chat.chatId, parent.messageId, { size: 5 });
  t.same(page.map((m) => m.seq), [12, 11, 10, 9, 8], 'replies: a page, newest first');
  t.same((await A.threads.allReplies(chat.chatId, parent.messageId, 5)).map((m) => m.content), sent.map((m) => m.content), 'allReplies: every reply, oldest first');
  t.match(await A.threads.state(chat.chatId, parent.messageId), { following: true, unreadCount: 12 }, "state: the parent's author follows, twelve unread");
  const inbox = await A.threads.inbox({ unread: true });
  t.same([inbox.unreadThreads, inbox.threads[0]?.parent.thread?.replyCount], [1, 12], 'inbox: the thread, with its summary');
  t.equal((await A.getChat(chat.chatId)).threadUnreadCount, 12, "the chat's summary counts them apart");
  t.match(await A.threads.markRead(chat.chatId, parent.messageId, 12), { readSeq: 12, unreadCount: 0 }, 'markRead clears them');
  t.same((await A.threads.inbox({ unread: true })).threads, [], 'and the unread inbox is empty');
  t.match(await B.threads.unfollow(chat.chatId, parent.messageId), { following: false }, 'unfollow');
  t.match(await B.threads.follow(chat.chatId, parent.messageId), { following: true, unreadCount: 0 }, 'follow again');
  // A round trip on A's connection: any thread.read sent before it has arrived by its ack.
  await A.realtime.action({ type: 'ping' });
  t.same(reads, [12], "the reader's connection is told, once");
  t.ok(summaries.some((e) => e.type === 'thread.updated' && e.thread.replyCount === 12), 'thread.updated events reach members');
});
