import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import t, { type Test } from 'tap';
import { client, freePort, requireService, WsClient } from '../helpers/index.ts';
import { FollowingMember, fullHistory, sendUntilAcked } from '../helpers/chat-load.ts';
import { clusterApp, startCluster, type TestCluster } from '../helpers/cluster.ts';
import { HOLD } from '../../node/store/index.ts';

const cassandra = await requireService('cassandra', (line) => t.comment(line));
const redis = await requireService('redis', (line) => t.comment(line));

interface Load {
  acked: Map<string, { messageId: string; seq: number }>;
  failed: string[];
  stop(): Promise<void>;
}

/** Every user sends messages one after another, each until acknowledged, until stopped. */
function startLoad(cluster: TestCluster, users: { jwt: string }[], chatId: string, prefer: (i: number) => string[]): Load {
  const acked = new Map<string, { messageId: string; seq: number }>();
  const failed: string[] = [];
  let running = true;
  const loops = users.map(async (u, i) => {
    for (let k = 0; running; k++) {
      const key = `u${i}-m${k}`;
      const result = await sendUntilAcked(() => prefer(i), u.jwt, chatId, key, key, 20_000);
      if (result) acked.set(key, result);
      else failed.push(key);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  return {
    acked,
    failed,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The live nodes, starting with the i-th: where member i connects and sends. */
const preferring = (cluster: TestCluster) => (i: number) => {
  const live = cluster.nodes.filter((n) => n.process.alive()).map((n) => n.url);
  const own = cluster.nodes[i % cluster.nodes.length]!;
  return own.process.alive() ? [own.url, ...live.filter((u) => u !== own.url)] : live;
};

/**
 * `maxUnused`: seq numbers that may be taken but never stored. A node that dies holding a chat
 * leaves the numbers it had taken beyond its head (HOLD.maxReserve at most) to be skipped by the
 * next writer, plus at most one unacknowledged send per sender.
 */
async function checkOutcome(t: Test, cluster: TestCluster, load: Load, members: FollowingMember[], chatId: string, jwt: string, maxUnused: number): Promise<void> {
  t.same(load.failed, [], 'every send was acknowledged in the end (retried with its idempotency key)');
  const liveUrl = cluster.nodes.find((n) => n.process.alive())!.url;
  const history = await fullHistory(liveUrl, chatId, jwt);
  const seqs = history.map((m) => m.seq);
  t.equal(new Set(seqs).size, seqs.length, 'no seq was assigned twice');
  const byContent = new Map<string, number>();
  for (const m of history) byContent.set(m.content, (byContent.get(m.content) ?? 0) + 1);
  const lost = [...load.acked.keys()].filter((k) => !byContent.has(k));
  const doubled = [...byContent].filter(([, n]) => n > 1).map(([k]) => k);
  t.same(lost, [], `every one of the ${load.acked.size} acknowledged messages is in history`);
  t.same(doubled, [], 'none is there twice');
  for (const [key, ack] of load.acked) {
    if (history.find((m) => m.content === key)?.seq !== ack.seq) {
      t.fail(`${key} acknowledged with seq ${ack.seq} is stored with another`);
      break;
    }
  }
  const newest = Math.max(...seqs);
  t.ok(newest - seqs.length <= maxUnused, `seq numbers taken but never stored: ${newest - seqs.length} (at most ${maxUnused})`);
  for (const m of members) {
    t.ok(await m.caughtUp(seqs, liveUrl, 15_000), `${m.name} has every stored message up to ${newest} (live, replayed or repaired)`);
    const missing = history.filter((h) => m.seen.get(h.seq) !== h.messageId).map((h) => h.seq);
    t.same(missing.slice(0, 10), [], `${m.name} holds exactly the stored messages`);
    t.same(m.duplicates(), [], `${m.name}: no socket was sent a message twice`);
  }
}

if (!cassandra || !redis) t.skip('cassandra or redis not running', () => undefined);
else {
  const contactPoint = `${cassandra.host}:${cassandra.port}`;

  t.test('kill -9 the node that owns a busy chat: its clients move to another node and resume, nothing acknowledged is lost or doubled', async (t) => {
    const cluster = await startCluster({ size: 3, cassandra: contactPoint, redisUrl: `redis://${redis.host}:${redis.port}` });
    t.teardown(() => cluster.stop());
    const names = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay'];
    const { users, appId } = await clusterApp(cluster, names);
    const chat = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'busy', memberIds: users.slice(1).map((u) => u.userId) }, users[0]!.jwt)).body;
    const victim = cluster.ownerOf(appId, chat.chatId);
    t.comment(`the chat's owner, node ${cluster.nodes.indexOf(victim)}, will be killed`);
    const prefer = preferring(cluster);
    const members = users.map((u, i) => new FollowingMember(names[i]!, u.jwt, chat.chatId, () => prefer(i)));
    await Promise.all(members.map((m) => m.connect()));

    const load = startLoad(cluster, users, chat.chatId, prefer);
    await new Promise((r) => setTimeout(r, 2000));
    const before = load.acked.size;
    const onVictim = members.filter((m) => m.urls.at(-1) === victim.url);
    await victim.process.kill();
    t.comment(`killed after ${before} acknowledged sends`);
    await new Promise((r) => setTimeout(r, 6000));
    await load.stop();
    t.ok(load.acked.size > before, `sends went on after the kill (${load.acked.size - before} more)`);
    t.ok(onVictim.length > 0, `${onVictim.length} members were connected to the killed node`);
    t.ok(onVictim.every((m) => m.reconnects > 0 && m.urls.at(-1) !== victim.url), `they reconnected to other nodes (${onVictim.map((m) => m.reconnects).join(', ')})`);
    await checkOutcome(t, cluster, load, members, chat.chatId, users[0]!.jwt, HOLD.maxReserve + users.length);
    await Promise.all(members.map((m) => m.stop()));
  });

  t.test('Redis restarted under load: delivery between nodes resumes within 5 s and clients repair the gap from history', async (t) => {
    const port = await freePort();
    const startRedis = async (): Promise<ChildProcess> => {
      const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      for (let i = 0; i < 100; i++) {
        if (child.exitCode !== null) throw new Error('redis-server exited');
        const up = await new Promise<boolean>((resolve) => {
          const s = connect(port, '127.0.0.1');
          s.once('connect', () => (s.destroy(), resolve(true)));
          s.once('error', () => resolve(false));
        });
        if (up) return child;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('redis-server did not start');
    };
    let redisProcess = await startRedis();
    const stopRedis = () => new Promise<void>((resolve) => {
      if (redisProcess.exitCode !== null) return resolve();
      redisProcess.once('exit', () => resolve());
      redisProcess.kill('SIGKILL');
    });
    t.teardown(stopRedis);
    const cluster = await startCluster({ size: 3, cassandra: contactPoint, redisUrl: `redis://127.0.0.1:${port}` });
    t.teardown(() => cluster.stop());
    const names = ['ann', 'ben', 'cat', 'dan', 'eve', 'fay'];
    const { users } = await clusterApp(cluster, names);
    const chat = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'busy', memberIds: users.slice(1).map((u) => u.userId) }, users[0]!.jwt)).body;
    const prefer = preferring(cluster);
    const members = users.map((u, i) => new FollowingMember(names[i]!, u.jwt, chat.chatId, () => prefer(i)));
    await Promise.all(members.map((m) => m.connect()));

    const load = startLoad(cluster, users, chat.chatId, prefer);
    await new Promise((r) => setTimeout(r, 1500));
    await stopRedis();
    t.comment(`Redis stopped after ${load.acked.size} acknowledged sends`);
    await new Promise((r) => setTimeout(r, 2000));
    const acksWhileDown = load.acked.size;
    redisProcess = await startRedis();
    const restartedAt = Date.now();
    t.comment(`Redis restarted; ${acksWhileDown} sends acknowledged so far (the store acknowledges, not Redis)`);

    // A probe from a member of node 0 must reach members on nodes 1 and 2 live.
    const probeSocket = await WsClient.connect(cluster.nodes[0]!.url, users[0]!.jwt);
    t.teardown(() => probeSocket.close());
    let resumedAfter = Infinity;
    // What each probe got, so a failure says where delivery stopped (no ack, or acked but not seen).
    const probeOutcomes: string[] = [];
    for (let i = 0; Date.now() - restartedAt < 10_000; i++) {
      const ack = await probeSocket.request({ type: 'message.send', chatId: chat.chatId, content: `probe-${i}`, idempotencyKey: `probe-${i}` }).catch((error: Error) => {
        probeOutcomes.push(`${Date.now() - restartedAt} ms: ${error.message}`);
        return undefined;
      });
      const seq = ack?.type === 'ack' ? (ack.result.message.seq as number) : undefined;
      if (ack && seq === undefined) probeOutcomes.push(`${Date.now() - restartedAt} ms: ${JSON.stringify(ack).slice(0, 200)}`);
      if (seq !== undefined) {
        await new Promise((r) => setTimeout(r, 250));
        const onOthers = [members[1]!, members[2]!].every((m) => m.sessions.at(-1)!.includes(seq));
        if (onOthers) {
          resumedAfter = Date.now() - restartedAt;
          break;
        }
        probeOutcomes.push(`${Date.now() - restartedAt} ms: seq ${seq} acked, not yet on ${[1, 2].filter((k) => !members[k]!.sessions.at(-1)!.includes(seq)).map((k) => names[k]).join(' and ')}`);
      }
    }
    t.comment(`live delivery between nodes resumed ${resumedAfter} ms after Redis came back`);
    if (resumedAfter >= 5000) t.comment(`probes: ${probeOutcomes.slice(-12).join('; ')}`);
    t.ok(resumedAfter < 5000, 'delivery resumes within 5 s');
    await new Promise((r) => setTimeout(r, 1000));
    await load.stop();
    t.ok(members.some((m) => m.repairs > 0), `clients repaired gaps from history (${members.map((m) => m.repairs).join(', ')})`);
    const probes = (await fullHistory(cluster.nodes[1]!.url, chat.chatId, users[0]!.jwt)).filter((m) => m.content.startsWith('probe-'));
    for (const p of probes) load.acked.set(p.content, { messageId: p.messageId, seq: p.seq });
    // No node dies here, but the chat may still change writers without a clean handover (a hold
    // that lapses while its renewal waits on a loaded database, as the node list changes; seen
    // once with the whole suite sharing two cores): the next writer then skips the numbers the
    // previous one had taken, as after a crash, and never reuses one.
    await checkOutcome(t, cluster, load, members, chat.chatId, users[0]!.jwt, HOLD.maxReserve);
    await Promise.all(members.map((m) => m.stop()));
  });
}
