import t from 'tap';
import { integration, startService, WsClient, type Frame } from '../helpers/index.ts';
import { onBothStores } from '../helpers/both-stores.ts';

t.test('a client disconnected while 100 messages are sent receives exactly those 100 on reconnect', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'resume', memberIds: [bob.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt);
  t.teardown(() => a.close());
  for (let i = 0; i < 5; i++) await a.request({ type: 'message.send', chatId, content: `before ${i}` });
  const seenBefore = await b.waitForCount((f) => f.type === 'message.new', 5);
  const lastSeen = seenBefore.at(-1)!.seq as number;
  await b.close();

  const acks = await a.sendAll(chatId, Array.from({ length: 100 }, (_, i) => `missed ${i}`));
  const missed = acks.map((x) => x.result.message.seq as number).sort((x, y) => x - y);

  // Reconnect with the last seen seq while more messages keep coming: replay and live must join
  // without a gap or a repeat.
  let sending = true;
  const live = (async () => {
    let n = 0;
    while (sending && n < 50) {
      await a.request({ type: 'message.send', chatId, content: `live ${n++}` });
    }
    return n;
  })();
  const b2 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: lastSeen } });
  t.teardown(() => b2.close());
  const resumed = await b2.waitFor((f) => f.type === 'resumed');
  t.same(resumed.chats[chatId], { fromSeq: lastSeen + 1, toSeq: resumed.chats[chatId].toSeq, gap: false, toRev: resumed.chats[chatId].toRev, stale: false });
  sending = false;
  const liveCount = await live;
  const total = 100 + liveCount;
  const got = await b2.waitForCount((f) => f.type === 'message.new' && f.chatId === chatId, total);
  const seqs = got.map((f) => f.seq as number);
  t.same(seqs, Array.from({ length: total }, (_, i) => lastSeen + 1 + i), 'every seq after the last seen, once, in order');
  t.same(seqs.slice(0, 100), missed, 'the 100 missed ones first');
  t.equal(got.filter((f) => f.replay).length >= 100, true, 'missed messages are marked as replays');
});

t.test('a gap larger than the replay limit is signalled so the client pages history', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => a.close());
  await a.sendAll(chatId, Array.from({ length: 600 }, (_, i) => `m${i}`));
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: 0 } });
  t.teardown(() => b.close());
  const gap = await b.waitFor((f) => f.type === 'resume.gap');
  t.same({ chatId: gap.chatId, fromSeq: gap.fromSeq, toSeq: gap.toSeq }, { chatId, fromSeq: 1, toSeq: 600 });
  await b.waitFor((f) => f.type === 'resumed');
  t.equal(b.frames.filter((f) => f.type === 'message.new').length, 0, 'no partial replay');
  await a.request({ type: 'message.send', chatId, content: 'after' });
  const next = await b.waitFor((f) => f.type === 'message.new');
  t.equal(next.seq, 601, 'live delivery continues after the gap signal');
});

t.test('changes to messages already seen are replayed on reconnect: current state, once each, in revision order', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', WS_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'changes', memberIds: [bob.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => a.close());
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) ids.push((await a.request({ type: 'message.send', chatId, content: `m${i}` })).result.message.messageId);
  const seen = await b.waitForCount((f) => f.type === 'message.new' && f.chatId === chatId, 4);
  const lastSeq = seen.at(-1)!.seq as number;
  const lastRev = Math.max(...seen.map((f) => f.rev as number));
  t.same(seen.map((f) => f.rev), [1, 2, 3, 4], 'every write takes the next revision of the chat');
  await b.close();

  // While bob is away: m0 is edited and then reacted to, m2 is deleted, m1 gets a reaction that is
  // taken back, and a new message arrives.
  await a.request({ type: 'message.edit', chatId, messageId: ids[0], content: 'm0 edited' });
  await a.request({ type: 'reaction.add', chatId, messageId: ids[1], reaction: '👀' });
  await a.request({ type: 'message.delete', chatId, messageId: ids[2] });
  await a.request({ type: 'reaction.add', chatId, messageId: ids[0], reaction: '👍' });
  await a.request({ type: 'reaction.remove', chatId, messageId: ids[1], reaction: '👀' });
  await a.request({ type: 'message.send', chatId, content: 'new' });

  const b2 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: `${lastSeq}:${lastRev}` } });
  t.teardown(() => b2.close());
  const resumed = await b2.waitFor((f) => f.type === 'resumed');
  t.match(resumed.chats[chatId], { fromSeq: 5, toSeq: 5, gap: false, toRev: 10, stale: false });
  const replay = b2.frames.filter((f) => f.chatId === chatId);
  t.same(replay.map((f) => [f.type, f.seq]), [['message.new', 5], ['message.updated', 3], ['message.updated', 1], ['message.updated', 2]], 'the new message, then each changed message once, by latest revision');
  t.ok(replay.every((f) => f.replay === true), 'all marked as replays');
  const [, deleted, m0, m1] = replay as [Frame, Frame, Frame, Frame];
  t.match(m0.message, { messageId: ids[0], content: 'm0 edited', edited: true, reactions: [{ reaction: '👍' }] }, 'm0 in its current state');
  t.equal(m0.rev, 8, 'at its latest revision');
  t.match(deleted.message, { messageId: ids[2], deleted: true, content: '' });
  t.same(m1.message.reactions, [], 'a reaction added and removed while away leaves the current state: none');

  // Resuming again from the revision the server named replays nothing.
  await b2.close();
  const b3 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: `5:${resumed.chats[chatId].toRev}` } });
  t.teardown(() => b3.close());
  await b3.waitFor((f) => f.type === 'resumed');
  t.same(b3.frames.filter((f) => f.chatId === chatId), [], 'up to date: nothing replayed');
  // A malformed revision is refused before the upgrade.
  await t.rejects(WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: '5:x' } }), /upgrade refused: 400/);
});

// Threads (README, "Threads"): what a member missed in a thread comes once, however it raced the reconnect.
await onBothStores(t, "a reconnect replays a thread's missed replies and its parent's summary once each, joined with live replies without a gap or a repeat", async (t, svc) => {
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'thread resume', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const a = await WsClient.connect(svc.nodeUrl, alice.jwt);
  t.teardown(() => a.close());
  const b = await WsClient.connect(svc.nodeUrl, bob.jwt);
  const parent = (await a.request({ type: 'message.send', chatId, content: 'parent' })).result.message;
  const reply = (content: string, extra: object = {}) => a.request({ type: 'message.send', chatId, content, parentId: parent.messageId, ...extra });
  // Bob follows no thread: he has this one open, on the socket and again on the next one.
  t.match((await b.request({ type: 'thread.open', chatId, parentId: parent.messageId })).result.thread, { following: false, lastSeq: 0 }, 'bob opens the thread');
  const r1 = (await reply('r1')).result.message;
  const seen = await b.waitFor((f) => f.type === 'thread.reply' && f.message.messageId === r1.messageId);
  // What a client resumes from: the reply's revision (its summary's, shared, does not count alone).
  const from = `${parent.seq}:${seen.rev}`;
  await b.close();

  const r2 = (await reply('r2')).result.message;
  await reply('r3');
  await a.request({ type: 'message.edit', chatId, messageId: r1.messageId, content: 'r1 edited' });
  await a.request({ type: 'reaction.add', chatId, messageId: r2.messageId, reaction: '👍' });
  const shown = (await reply('r4, shown in the chat', { showInChat: true })).result.message;

  // Replies keep coming while bob reconnects.
  let sending = true;
  const live = (async () => {
    let n = 0;
    while (sending && n < 30) await reply(`live ${n++}`);
    return n;
  })();
  const b2 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: from }, threads: [`${chatId}:${parent.messageId}`] });
  t.teardown(() => b2.close());
  const resumed = await b2.waitFor((f) => f.type === 'resumed');
  sending = false;
  const liveCount = await live;
  const total = 4 + liveCount;
  await b2.waitFor((f) => f.type === 'thread.reply' && f.seq === total);
  t.same(resumed.chats[chatId].stale, false, 'nothing stale');
  const replies = b2.frames.filter((f) => f.type === 'thread.reply');
  const seqs = replies.map((f) => f.seq as number).sort((x, y) => x - y);
  t.same(seqs, Array.from({ length: total }, (_, i) => i + 1), `every reply once, replayed or live: r1 (changed), r2…r4 and ${liveCount} sent during the reconnect`);
  const replayed = replies.filter((f) => f.replay === true);
  t.ok(replayed.length >= 4, 'at least the four missed before the reconnect came as replays');
  t.match(replayed.find((f) => f.seq === 1)!.message, { content: 'r1 edited', edited: true }, 'r1 in its current state');
  t.same(replayed.find((f) => f.seq === 2)!.message.reactionCounts, { '👍': 1 }, 'r2 with its reaction');
  t.equal(replayed.find((f) => f.seq === 4)!.message.messageId, shown.messageId, 'the reply shown in the chat, in its thread');
  t.same(b2.frames.filter((f) => f.type === 'message.new' && f.replay === true).map((f) => f.message.messageId), [shown.messageId], "and as the chat's new message");
  const summaries = b2.frames.filter((f) => f.type === 'message.updated' && f.message.messageId === parent.messageId);
  t.equal(summaries.length, 1, "the parent's summary once");
  t.ok(summaries[0]!.message.thread.replyCount >= 4, 'in its state at the reconnect');

  // Resuming again from where the server said it stands replays nothing of the thread.
  const upTo = Math.max(resumed.chats[chatId].toRev, ...b2.frames.filter((f) => f.type === 'thread.reply' && !f.replay).map((f) => f.rev as number));
  const lastSeq = Math.max(parent.seq, ...b2.frames.filter((f) => f.type === 'message.new').map((f) => f.seq as number));
  await b2.close();
  const b3 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: `${lastSeq}:${upTo}` }, threads: [`${chatId}:${parent.messageId}`] });
  t.teardown(() => b3.close());
  await b3.waitFor((f) => f.type === 'resumed');
  t.same(b3.frames.filter((f) => f.chatId === chatId), [], 'up to date: nothing replayed');

  // Neither followed nor open: a resume from the same point replays no reply, only the parent's summary.
  await b3.close();
  const b4 = await WsClient.connect(svc.nodeUrl, bob.jwt, { resume: { [chatId]: from } });
  t.teardown(() => b4.close());
  await b4.waitFor((f) => f.type === 'resumed');
  t.same(b4.frames.filter((f) => f.type === 'thread.reply'), [], 'a thread neither followed nor open: no reply replayed');
  t.equal(b4.frames.filter((f) => f.type === 'message.updated' && f.message.messageId === parent.messageId).length, 1, "its parent's summary once");
});
