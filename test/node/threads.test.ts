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
  const listed = await it.node.get(`/api/messages/${chat.chatId}/${firstReply.messageId}/reactions`, cat.jwt);
  t.same([listed.status, listed.body.reactions?.map((r: { reaction: string }) => r.reaction)], [200, ['👍']], "a reply's reactions page from their route");

  // Moderation: a reply is flagged, hidden at the threshold, and listed for review with its content.
  await it.node.put('/api/moderation/settings', { flagHideThreshold: 1 }, it.apiKey);
  const flagged = replies[3];
  const flag = await it.node.post(`/api/messages/${chat.chatId}/${flagged.messageId}/flags`, { reason: 'spam' }, ann.jwt);
  t.same([flag.status, flag.body.messageHidden], [201, true], 'a member flags a reply; at the threshold it is hidden');
  t.match((await sockets[1]!.waitFor((f) => f.type === 'message.hidden' && f.message.messageId === flagged.messageId)).message, { hidden: true, content: '' }, 'announced as hidden');
  const queued = (await it.node.get('/api/moderation/flags', it.apiKey)).body.flags.find((f: { messageId: string }) => f.messageId === flagged.messageId);
  t.match(queued, { chatId: chat.chatId, message: { content: flagged.content, hidden: true } }, 'the review queue shows the reply as stored');
  const reviewed = await it.node.post(`/api/moderation/flags/${queued.flagId}/resolve`, { action: 'dismiss' }, it.apiKey);
  t.equal(reviewed.status, 200, 'a review dismisses it');
  t.equal((await sockets[1]!.waitFor((f) => f.type === 'message.restored' && f.message.messageId === flagged.messageId)).message.content, flagged.content, 'restored');
  await it.node.put('/api/moderation/settings', { flagHideThreshold: 0 }, it.apiKey);
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

// Following (README, "Threads"): who follows, their unread replies and mentions, the inbox, read marks.
await onBothStores(t, "followers' unread replies and inbox move with each reply and clear by reading the thread only", async (t, svc) => {
  const it = await integration(svc, 'follows');
  const [ann, ben, cat] = [await it.user('ann'), await it.user('ben'), await it.user('cat')];
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'follows', memberIds: [ben.userId, cat.userId] }, ann.jwt)).body;
  const post = (body: object, jwt: string) => it.node.post(`/api/messages/${chat.chatId}`, body, jwt);
  const parent = (await post({ content: 'question' }, ann.jwt)).body.message;
  const thread = `/api/chats/${chat.chatId}/threads/${parent.messageId}`;
  const state = async (jwt: string) => (await it.node.get(thread, jwt)).body;
  const inbox = async (jwt: string, query = '') => (await it.node.get(`/api/users/me/threads${query}`, jwt)).body;
  const summary = async (jwt: string) => (await it.node.get(`/api/chats/${chat.chatId}`, jwt)).body;

  t.match(await state(ann.jwt), { following: false, unreadCount: 0, lastSeq: 0 }, 'nobody follows a thread without replies');
  const ws = await WsClient.connect(svc.nodeUrl, ann.jwt);
  t.teardown(() => ws.close());

  await post({ content: 'answer 1', parentId: parent.messageId }, ben.jwt);
  t.match(await state(ann.jwt), { following: true, readSeq: 0, lastSeq: 1, unreadCount: 1 }, "the parent's author follows at the first reply, with it unread");
  t.match(await state(ben.jwt), { following: true, readSeq: 1, unreadCount: 0 }, 'the replier follows, its own reply read');
  t.match(await state(cat.jwt), { following: false, unreadCount: 0 }, 'a member who took no part does not follow');
  await post({ content: 'answer 2, @cat', parentId: parent.messageId, mentions: [cat.userId] }, ben.jwt);
  t.match(await state(cat.jwt), { following: true, unreadCount: 1, mentionCount: 1 }, 'the mentioned member follows, the mention unread and counted');
  t.match(await state(ann.jwt), { unreadCount: 2, mentionCount: 0 }, 'the mention counts for the mentioned user only');
  t.equal((await summary(ann.jwt)).threadUnreadCount, 2, "the chat's threadUnreadCount beside its own count");
  t.equal((await summary(ann.jwt)).unreadCount, 0, 'replies are not unread messages of the chat');

  const annInbox = await inbox(ann.jwt);
  t.same([annInbox.threads.length, annInbox.unreadThreads], [1, 1], "the thread is in its author's inbox, unread");
  t.match(annInbox.threads[0], { chatId: chat.chatId, parentId: parent.messageId, unreadCount: 2, parent: { messageId: parent.messageId, thread: { replyCount: 2 } } }, 'with its parent and summary');

  await it.node.post(`/api/chats/${chat.chatId}/read`, { seq: parent.seq }, ann.jwt);
  t.equal((await state(ann.jwt)).unreadCount, 2, "reading the chat does not clear the thread's unread replies");
  const read = await it.node.post(`${thread}/read`, { seq: 2 }, ann.jwt);
  t.match([read.status, read.body], [200, { readSeq: 2, unreadCount: 0 }], 'reading the thread does');
  t.match(await ws.waitFor((f) => f.type === 'thread.read' && f.parentId === parent.messageId), { seq: 2, chatId: chat.chatId }, "the reader's connections are told");
  t.same([(await inbox(ann.jwt)).unreadThreads, (await inbox(ann.jwt, '?unread=true')).threads.length, (await inbox(ann.jwt)).threads.length], [0, 0, 1], 'the inbox: nothing unread, the thread still followed');
  t.equal((await summary(ann.jwt)).threadUnreadCount, 0, 'and the chat shows none');
  t.equal((await it.node.post(`${thread}/read`, { seq: 1 }, ann.jwt)).body.readSeq, 2, 'a read mark never moves back');

  const off = await it.node.del(`${thread}/follow`, cat.jwt);
  t.match([off.status, off.body], [200, { following: false, unreadCount: 0 }], 'a member unfollows');
  await post({ content: 'answer 3', parentId: parent.messageId }, ann.jwt);
  t.match(await state(cat.jwt), { following: false, unreadCount: 0 }, 'and counts no new reply');
  t.match(await state(ben.jwt), { unreadCount: 1 }, 'while a follower does');
  t.same((await inbox(cat.jwt)).threads, [], 'nor has it in its inbox');
  const on = await it.node.put(`${thread}/follow`, undefined, cat.jwt);
  t.match([on.status, on.body], [200, { following: true, unreadCount: 0, lastSeq: 3 }], 'following again starts from what is there');

  // The inbox pages newest activity first across chats, and leaves out chats the user left.
  const threads = [];
  for (let i = 0; i < 5; i++) {
    const p = (await post({ content: `topic ${i}` }, ben.jwt)).body.message;
    await post({ content: `re ${i}`, parentId: p.messageId }, cat.jwt);
    threads.push(p.messageId);
  }
  const pages = [];
  let cursor = '';
  for (let page = 0; page < 4; page++) {
    const body = await inbox(ben.jwt, `?size=2${cursor ? `&cursor=${cursor}` : ''}`);
    pages.push(...body.threads.map((e: { parentId: string }) => e.parentId));
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  t.same(pages, [...threads.reverse(), parent.messageId], "ben's six threads, newest activity first, paged in twos, each once");
  t.equal((await it.node.get('/api/users/me/threads?cursor=nonsense', ben.jwt)).body.errors?.[0]?.path, '/query/cursor', 'a cursor it did not give is refused, naming it');
  t.equal((await inbox(ben.jwt, '?unread=true')).unreadThreads, 6, 'before leaving: six threads with unread replies');
  t.same((await inbox(ben.jwt, '?unread=true')).threads.length, 6, 'listed as unread');
  await it.node.del(`/api/chats/${chat.chatId}/members/${ben.userId}`, ben.jwt);
  const after = await inbox(ben.jwt);
  t.same([after.threads, after.unreadThreads], [[], 0], 'after leaving the chat, its threads leave the inbox and its count');
  t.equal((await it.node.get(thread, (await it.user('out')).jwt)).status, 404, "a non-member reads no thread's state");
  t.equal((await it.node.put(`/api/chats/${chat.chatId}/threads/${chat.chatId}/follow`, undefined, ann.jwt)).status, 404, 'no thread of a message that is not there');
});

// "Also in the chat" (README, "Threads"): one reply, in the chat's timeline and in its thread.
await onBothStores(t, 'a reply sent with showInChat is in both lists, changes in both, and a burst of replies pages in order', async (t, svc) => {
  const it = await integration(svc, 'show-in-chat');
  const [ann, ben] = [await it.user('ann'), await it.user('ben')];
  const chat = (await it.node.post('/api/chats', { type: 'group', name: 'both', memberIds: [ben.userId] }, ann.jwt)).body;
  const post = (body: object, jwt: string) => it.node.post(`/api/messages/${chat.chatId}`, body, jwt);
  const parent = (await post({ content: 'release?' }, ann.jwt)).body.message;
  const ws = await WsClient.connect(svc.nodeUrl, ann.jwt);
  t.teardown(() => ws.close());
  await post({ content: 'first, thread only', parentId: parent.messageId }, ben.jwt);

  const sent = await post({ content: 'shipped!', parentId: parent.messageId, showInChat: true, idempotencyKey: 'ship' }, ben.jwt);
  t.same([sent.status, sent.body.message.seq, sent.body.message.showInChat, sent.body.message.parentId], [201, 2, true, parent.messageId], 'the answer: the reply, second in its thread, shown in the chat');
  const id = sent.body.message.messageId;
  const live = await ws.waitFor((f) => f.type === 'message.new' && f.message.messageId === id);
  t.same([live.seq, live.message.parentId, live.message.showInChat], [2, parent.messageId, true], "members get it as the chat's next message (seq 2 of the chat)");
  t.equal((await ws.waitFor((f) => f.type === 'thread.reply' && f.message.messageId === id)).seq, 2, 'and as the thread’s reply');
  const history = (await it.node.get(`/api/messages/getMessages/${chat.chatId}`, ann.jwt)).body.messages;
  t.same(history.map((m: { messageId: string; seq: number }) => [m.messageId, m.seq]), [[id, 2], [parent.messageId, 1]], "the chat's timeline: the parent and the reply shown in it, not the other reply");
  const thread = () => it.node.get(`/api/chats/${chat.chatId}/threads/${parent.messageId}/messages`, ann.jwt).then((r) => r.body.messages);
  t.same((await thread()).map((m: { messageId: string; seq: number }) => m.seq), [2, 1], 'the thread holds both replies');
  t.equal((await thread())[0].messageId, id, 'with the same id');
  const retry = await post({ content: 'shipped!', parentId: parent.messageId, showInChat: true, idempotencyKey: 'ship' }, ben.jwt);
  t.same([retry.status, retry.body.message.messageId], [200, id], 'a retry returns it');
  t.equal((await it.node.get(`/api/chats/${chat.chatId}`, ann.jwt)).body.lastSeq, 2, 'and adds nothing to the chat');

  t.equal((await it.node.put(`/api/messages/${chat.chatId}/${id}`, { content: 'shipped v2!' }, ben.jwt)).status, 200, 'its author edits it');
  t.equal((await ws.waitFor((f) => f.type === 'message.edited' && f.message.messageId === id)).seq, 2, 'announced once, in the chat');
  t.equal((await thread())[0].content, 'shipped v2!', 'the thread shows the edit');
  await it.node.del(`/api/messages/${chat.chatId}/${id}`, ben.jwt);
  const [inHistory] = (await it.node.get(`/api/messages/getMessages/${chat.chatId}`, ann.jwt)).body.messages;
  t.same([inHistory.deleted, (await thread())[0].deleted], [true, true], 'deleted in both');

  const nested = await post({ content: 'deeper', parentId: id }, ann.jwt);
  t.same([nested.status, nested.body.errors?.[0]?.path], [400, '/body/parentId'], 'a reply shown in the chat is still a reply: no thread of its own');
  const alone = await post({ content: 'hm', showInChat: true }, ann.jwt);
  t.same([alone.status, alone.body.errors?.[0]?.path], [400, '/body/showInChat'], 'showInChat without parentId is refused, naming it');

  // Twenty replies at once: numbered 3…22 and paged back in exactly that order.
  const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => post({ content: `burst ${i}`, parentId: parent.messageId, ...(i % 5 === 0 ? { showInChat: true } : {}) }, i % 2 ? ann.jwt : ben.jwt)));
  t.ok(burst.every((r) => r.status === 201), 'all taken');
  const seqs = (await it.node.get(`/api/chats/${chat.chatId}/threads/${parent.messageId}/messages?size=30`, ann.jwt)).body.messages.map((m: { seq: number }) => m.seq);
  t.same(seqs, Array.from({ length: 22 }, (_, i) => 22 - i), 'the thread pages newest first in its own order, whatever millisecond each took');
  const chatSeqs = (await it.node.get(`/api/messages/getMessages/${chat.chatId}`, ann.jwt)).body.messages.map((m: { seq: number }) => m.seq);
  t.same(chatSeqs, Array.from({ length: chatSeqs.length }, (_, i) => chatSeqs.length - i), "and the chat's timeline in its own (the parent, and each reply shown in it)");
  t.equal(chatSeqs.length, 6, 'the parent and the five replies shown in the chat');
});
