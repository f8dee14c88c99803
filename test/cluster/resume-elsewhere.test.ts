import t from 'tap';
import { client, WsClient, type Frame } from '../helpers/index.ts';
import { fullHistory } from '../helpers/chat-load.ts';
import { clusterApp, clusterBackends, startCluster, type TestCluster } from '../helpers/cluster.ts';

/**
 * Resume on ANOTHER node is exactly once, without paging: a member on node A sees seqs up to n,
 * disconnects; messages n+1..m are sent; it reconnects to node B with `resume` from n and must be
 * sent exactly n+1..m, once each and in order, by the replay, with no `resume.gap`; and it never
 * pages history (this test's client has no history fallback at all, unlike FollowingMember, which
 * would fill a broken replay from history and hide it). The last subtest stops the chat's owner
 * before the reconnect, so that no replay can come, and requires the same check to report it:
 * the check can fail.
 */

const backends = await clusterBackends(t);

interface Scenario {
  cluster: TestCluster;
  appId: string;
  chatId: string;
  ann: { userId: string; jwt: string };
  ben: { userId: string; jwt: string };
}

async function scenario(cluster: TestCluster): Promise<Scenario> {
  const { users, appId } = await clusterApp(cluster, ['ann', 'ben']);
  const [ann, ben] = users as [Scenario['ann'], Scenario['ben']];
  const created = await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'resume', memberIds: [ben.userId] }, ann.jwt);
  if (created.status !== 201) throw new Error(`chat: ${created.status} ${created.text}`);
  return { cluster, appId, chatId: created.body.chatId, ann, ben };
}

async function send(url: string, s: Scenario, content: string): Promise<{ seq: number; messageId: string }> {
  const r = await client(url).post(`/api/messages/${s.chatId}`, { content, idempotencyKey: content }, s.ben.jwt);
  if (r.status !== 201 && r.status !== 200) throw new Error(`send ${content}: ${r.status} ${r.text}`);
  return { seq: r.body.message.seq, messageId: r.body.message.messageId };
}

/** The message frames of the chat a socket was sent, in arrival order. */
const messagesOf = (socket: WsClient, chatId: string) => socket.frames.filter((f) => f.chatId === chatId && (f.type === 'message.new' || f.type === 'message.updated' || f.type === 'resume.gap'));

/**
 * What is wrong with a resumed socket's frames of the chat, given the messages it must be sent
 * (every stored message after the resume point): any resume.gap, a message missing, sent twice or
 * out of order, a replayed message after a live one, or a `resumed` that reports a gap.
 */
function replayProblems(frames: Frame[], chatId: string, expected: { seq: number; messageId: string }[], mustReplay: number[]): string[] {
  const problems: string[] = [];
  const chatFrames = frames.filter((f) => f.chatId === chatId);
  const gaps = chatFrames.filter((f) => f.type === 'resume.gap');
  if (gaps.length) problems.push(`told to page: ${gaps.map((g) => `resume.gap ${g.fromSeq}..${g.toSeq}`).join(', ')}`);
  const news = chatFrames.filter((f) => f.type === 'message.new');
  const got = news.map((f) => f.seq as number);
  const want = expected.map((m) => m.seq);
  if (got.join(',') !== want.join(',')) problems.push(`sent seqs [${got.join(',')}], expected exactly [${want.join(',')}]`);
  for (const f of news) {
    const m = expected.find((e) => e.seq === f.seq);
    if (m && m.messageId !== f.message.messageId) problems.push(`seq ${f.seq} sent as ${f.message.messageId}, stored as ${m.messageId}`);
  }
  const firstLive = news.findIndex((f) => f.replay !== true);
  if (firstLive >= 0 && news.slice(firstLive).some((f) => f.replay === true)) problems.push('a replayed message came after a live one');
  const replayed = news.filter((f) => f.replay === true).map((f) => f.seq as number);
  const notReplayed = mustReplay.filter((seq) => !replayed.includes(seq));
  if (notReplayed.length) problems.push(`seqs ${notReplayed.join(',')} were missed while away but not replayed`);
  const resumed = frames.find((f) => f.type === 'resumed');
  if (!resumed) problems.push('no resumed frame');
  else if (!resumed.chats?.[chatId]) problems.push(`resumed names no entry for the chat: ${JSON.stringify(resumed.chats)}`);
  else if (resumed.chats[chatId].gap) problems.push(`resumed reports a gap: ${JSON.stringify(resumed.chats[chatId])}`);
  return problems;
}

/**
 * Ann follows the chat on node `a` until she has seq n, disconnects; ben sends n+1..m (and edits
 * one of the messages she saw); ann resumes on node `b` from n and rev. Returns her new socket and
 * what she must be sent.
 */
async function awayAndBack(s: Scenario, a: number, b: number, options: { n: number; m: number; beforeReconnect?: () => Promise<void> }) {
  const nodes = s.cluster.nodes;
  const first = await WsClient.connect(nodes[a]!.url, s.ann.jwt);
  const seen: { seq: number; messageId: string }[] = [];
  for (let i = 1; i <= options.n; i++) seen.push(await send(nodes[(a + i) % nodes.length]!.url, s, `before-${i}`));
  const live = await first.waitForCount((f) => f.type === 'message.new' && f.chatId === s.chatId, options.n, 10_000);
  const lastSeen = live.at(-1)!;
  await first.close();

  const missed: { seq: number; messageId: string }[] = [];
  for (let i = options.n + 1; i <= options.m; i++) missed.push(await send(nodes[i % nodes.length]!.url, s, `away-${i}`));
  // One message she had seen is edited while she is away: with her rev, the replay brings it too.
  const edited = await client(nodes[b]!.url).put(`/api/messages/${s.chatId}/${seen[0]!.messageId}`, { content: 'edited while away' }, s.ben.jwt);
  await options.beforeReconnect?.();
  const second = await WsClient.connect(nodes[b]!.url, s.ann.jwt, { resume: { [s.chatId]: `${lastSeen.seq}:${lastSeen.rev}` } });
  return { first, second, live, lastSeen, missed, edited, seen };
}

let sharedCluster: TestCluster | undefined;
if (backends) {
  const cluster = await startCluster({ size: 3, ...backends });
  sharedCluster = cluster;
  t.teardown(() => cluster.stop());
  const others = (appId: string, chatId: string) => {
    const owner = cluster.nodes.indexOf(cluster.ownerOf(appId, chatId));
    return { owner, rest: [0, 1, 2].filter((i) => i !== owner) as [number, number] };
  };

  t.test('resumed on a node that neither was on nor owns the chat: the replay crosses Redis, exactly n+1..m once, in order, no gap, no paging', async (t) => {
    const s = await scenario(cluster);
    const { owner, rest: [a, b] } = others(s.appId, s.chatId);
    t.comment(`owner node ${owner}; ann on node ${a}, then resumes on node ${b}`);
    const { second, lastSeen, missed, edited, seen } = await awayAndBack(s, a, b, { n: 5, m: 25 });
    t.teardown(() => second.close());
    t.equal(edited.status, 200, 'a message she saw was edited while she was away');
    t.equal(lastSeen.seq, 5, 'she had seen up to seq 5 live');
    await second.waitFor((f) => f.type === 'resumed', 10_000);
    const frames = [...second.frames];
    const problems = replayProblems(frames, s.chatId, missed, missed.map((m) => m.seq));
    t.same(problems, [], 'the replay: exactly the missed messages, once each, in order, no resume.gap');
    t.same(messagesOf(second, s.chatId).filter((f) => f.type === 'message.new').map((f) => [f.seq, f.replay]), missed.map((m) => [m.seq, true]), `seqs 6..25 each once, all by replay`);
    const updates = messagesOf(second, s.chatId).filter((f) => f.type === 'message.updated');
    t.same(updates.map((f) => [f.seq, f.message.content, f.replay]), [[seen[0]!.seq, 'edited while away', true]], 'and the seen message that was edited, once, by replay');

    // Live goes on after the replay: the next message once, live.
    const next = await send(cluster.nodes[owner]!.url, s, 'after-resume');
    await second.waitFor((f) => f.type === 'message.new' && f.seq === next.seq, 5000);
    await new Promise((r) => setTimeout(r, 300));
    t.same(second.frames.filter((f) => f.type === 'message.new' && f.chatId === s.chatId).map((f) => f.seq), [...missed.map((m) => m.seq), next.seq], 'then the next message live, and nothing twice');
    const history = await fullHistory(cluster.nodes[b]!.url, s.chatId, s.ann.jwt);
    t.same(history.map((m) => m.seq), Array.from({ length: 26 }, (_, i) => i + 1), 'the store holds seqs 1..26 (nothing skipped that the replay could have hidden)');
  });

  t.test('resumed on the owner from a socket on another node: exactly n+1..m once, in order, no gap', async (t) => {
    const s = await scenario(cluster);
    const { owner, rest: [a] } = others(s.appId, s.chatId);
    t.comment(`owner node ${owner}; ann on node ${a}, then resumes on the owner`);
    const { second, missed } = await awayAndBack(s, a, owner, { n: 3, m: 40 });
    t.teardown(() => second.close());
    await second.waitFor((f) => f.type === 'resumed', 10_000);
    t.same(replayProblems([...second.frames], s.chatId, missed, missed.map((m) => m.seq)), [], 'exactly seqs 4..40, once each, in order, by replay, no resume.gap');
  });

  t.test('resumed elsewhere while messages keep coming: replay then live, every seq once and in order, no gap', async (t) => {
    const s = await scenario(cluster);
    const { owner, rest: [a, b] } = others(s.appId, s.chatId);
    let sending = true;
    const during: { seq: number; messageId: string }[] = [];
    let loop: Promise<void> = Promise.resolve();
    const { second, missed } = await awayAndBack(s, a, b, {
      n: 4,
      m: 30,
      beforeReconnect: async () => {
        // Sends keep coming through the owner (and another node) while she reconnects and resumes.
        loop = (async () => {
          for (let i = 0; sending; i++) {
            during.push(await send(cluster.nodes[i % 2 ? owner : a]!.url, s, `during-${i}`));
            await new Promise((r) => setTimeout(r, 15));
          }
        })();
        await new Promise((r) => setTimeout(r, 50));
      },
    });
    t.teardown(() => second.close());
    await second.waitFor((f) => f.type === 'resumed', 10_000);
    await new Promise((r) => setTimeout(r, 400));
    sending = false;
    await loop;
    const last = during.at(-1)!;
    await second.waitFor((f) => f.type === 'message.new' && f.chatId === s.chatId && f.seq === last.seq, 5000);
    await new Promise((r) => setTimeout(r, 300));
    const history = await fullHistory(cluster.nodes[a]!.url, s.chatId, s.ann.jwt);
    const expected = history.filter((m) => m.seq > 4);
    t.comment(`${during.length} messages sent during the reconnect; replayed ${second.frames.filter((f) => f.type === 'message.new' && f.replay).length}, live ${second.frames.filter((f) => f.type === 'message.new' && !f.replay).length}`);
    t.ok(during.length > 5, 'messages were sent while she resumed');
    t.same(replayProblems([...second.frames], s.chatId, expected, missed.map((m) => m.seq)), [], 'every seq after 4 exactly once and in order: the replay, then live, no resume.gap');
  });
}

if (backends) {
  t.test('the check fails when the replay does not come (the owner paused during the reconnect)', async (t) => {
    // Last, on the same cluster: the chat's owner is stopped (SIGSTOP) after the messages are
    // stored and before ann resumes on another node, so no replay can come from it. The node she
    // resumes on waits 5 s, then tells her to page (resume.gap): the check must say so.
    const s = await scenario(sharedCluster!);
    const owner = sharedCluster!.nodes.indexOf(sharedCluster!.ownerOf(s.appId, s.chatId));
    const [a, b] = [0, 1, 2].filter((i) => i !== owner) as [number, number];
    const pid = sharedCluster!.nodes[owner]!.process.pid;
    let paused = false;
    t.teardown(() => paused && process.kill(pid, 'SIGCONT'));
    const { second, missed } = await awayAndBack(s, a, b, {
      n: 3,
      m: 12,
      beforeReconnect: async () => {
        process.kill(pid, 'SIGSTOP');
        paused = true;
      },
    });
    t.teardown(() => second.close());
    await second.waitFor((f) => f.type === 'resumed', 15_000);
    process.kill(pid, 'SIGCONT');
    paused = false;
    const problems = replayProblems([...second.frames], s.chatId, missed, missed.map((m) => m.seq));
    t.comment(`what the check reports: ${problems.join('; ')}`);
    t.ok(problems.length > 0, 'the check reports the replay that did not come');
    t.ok(problems.some((p) => p.startsWith('told to page')), 'the node fell back to resume.gap, which a paging client such as FollowingMember would have hidden');

    // The protocol says: page fromSeq..toSeq, live delivery continues after toSeq.
    const gap = second.frames.find((f) => f.type === 'resume.gap' && f.chatId === s.chatId);
    const next = await send(sharedCluster!.nodes[owner]!.url, s, 'after-the-gap');
    await second.waitFor((f) => f.type === 'message.new' && f.seq === next.seq, 10_000);
    t.comment(`resume.gap ${gap?.fromSeq}..${gap?.toSeq}; the store's last seq was ${missed.at(-1)!.seq}; the next message came live as seq ${next.seq}`);
    // resume.ts reads what is stored (MessageStore.newest), not the numbers the writer took ahead.
    t.equal(gap?.toSeq, missed.at(-1)!.seq, 'resume.gap names the last stored seq as toSeq');
    t.ok(next.seq > (gap?.toSeq ?? 0), 'live delivery continues after toSeq');
  });
}
