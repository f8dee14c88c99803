import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { HeartbeatPresence, type Presence } from '../../node/bus/index.ts';
import { eventually, pause, recordingLog, SwitchedLeases, type OpenedLeases } from './bus-helpers.ts';

const TTL_MS = 400;
const HEARTBEAT_MS = 100;

interface Node {
  id: string;
  presence: Presence;
  /** Cut the node off its store: its heartbeats stop landing, as when it dies. */
  link: SwitchedLeases;
  log: ReturnType<typeof recordingLog>;
}

/**
 * The behaviour of Presence (node/bus/presence.ts) across nodes, run over each Leases store:
 * `open(n)` gives n handles on one fresh namespace, one per simulated node.
 */
export function presenceConformance(t: Test, name: string, open: (n: number) => Promise<OpenedLeases>): void {
  const withNodes = (title: string, n: number, body: (t: Test, nodes: Node[]) => Promise<void>) =>
    t.test(`${name} presence: ${title}`, async (t) => {
      const opened = await open(n);
      const nodes = opened.stores.map((store, i): Node => {
        const link = new SwitchedLeases(store);
        const log = recordingLog();
        return { id: `node-${i}`, link, log, presence: new HeartbeatPresence(link, { ttlMs: TTL_MS, heartbeatMs: HEARTBEAT_MS, log }) };
      });
      t.teardown(async () => {
        for (const node of nodes) node.link.down = false;
        await Promise.all(nodes.map((node) => node.presence.close()));
        await opened.close();
      });
      await body(t, nodes);
    });

  withNodes('online and offline transitions across nodes', 2, async (t, [a, b]) => {
    const [appId, userId] = [randomUUID(), randomUUID()];
    t.equal(await a!.presence.isOnline(appId, userId), false);
    t.equal(await a!.presence.online(appId, userId, a!.id, 'c1'), true, 'first connection: the user came online');
    t.equal(await b!.presence.online(appId, userId, b!.id, 'c2'), false, 'second connection, on another node: no transition');
    t.equal(await a!.presence.online(appId, userId, a!.id, 'c1'), false, 'repeating online() is no transition');
    t.equal(await b!.presence.isOnline(appId, userId), true);
    t.equal(await a!.presence.offline(appId, userId, a!.id, 'c1'), false, 'a connection remains on b');
    t.equal(await a!.presence.isOnline(appId, userId), true);
    t.equal(await b!.presence.offline(appId, userId, b!.id, 'c2'), true, 'last connection closed: the user went offline');
    t.equal(await b!.presence.offline(appId, userId, b!.id, 'c2'), false, 'repeating offline() is no transition');
    t.equal(await a!.presence.isOnline(appId, userId), false);
  });

  withNodes("an application's users online: distinct users across nodes, kept by heartbeats, dropped with a dead node", 2, async (t, [a, b]) => {
    const [appId, other] = [randomUUID(), randomUUID()];
    const [u1, u2, u3] = [randomUUID(), randomUUID(), randomUUID()];
    t.same([...(await a!.presence.usersOnline(appId))], [], 'nobody at first');
    await a!.presence.online(appId, u1, a!.id, 'c1');
    await a!.presence.online(appId, u1, a!.id, 'c2');
    await b!.presence.online(appId, u1, b!.id, 'c3');
    await b!.presence.online(appId, u2, b!.id, 'c4');
    await a!.presence.online(appId, u3, a!.id, 'c5');
    await b!.presence.online(other, u1, b!.id, 'c6');
    t.same(new Set(await b!.presence.usersOnline(appId)), new Set([u1, u2, u3]), 'three distinct users, whatever their sockets and nodes');
    t.same(new Set(await a!.presence.usersOnline(other)), new Set([u1]), 'per application');
    await a!.presence.offline(appId, u1, a!.id, 'c1');
    t.equal((await b!.presence.usersOnline(appId)).size, 3, 'u1 still has sockets');
    await b!.presence.offline(appId, u2, b!.id, 'c4');
    t.same(new Set(await a!.presence.usersOnline(appId)), new Set([u1, u3]), 'u2 left');
    await pause(TTL_MS * 2);
    t.same(new Set(await a!.presence.usersOnline(appId)), new Set([u1, u3]), 'heartbeats keep them past the TTL');
    a!.link.down = true;
    await eventually("node a's own users drop out", async () => (await b!.presence.usersOnline(appId)).size === 1, TTL_MS * 5);
    t.same(new Set(await b!.presence.usersOnline(appId)), new Set([u1]), "u1 stays: it has a socket on b; u3 was only on the dead node");
  });

  withNodes('of concurrent calls on several nodes, exactly one reports each transition', 3, async (t, nodes) => {
    const [appId, userId] = [randomUUID(), randomUUID()];
    const conns = nodes.flatMap((node) => [1, 2, 3].map((i) => ({ node, connId: `c${i}` })));
    const onlines = await Promise.all(conns.map(({ node, connId }) => node.presence.online(appId, userId, node.id, connId)));
    t.equal(onlines.filter(Boolean).length, 1, 'one online transition');
    const offlines = await Promise.all(conns.map(({ node, connId }) => node.presence.offline(appId, userId, node.id, connId)));
    t.equal(offlines.filter(Boolean).length, 1, 'one offline transition');
    t.equal(await nodes[0]!.presence.isOnline(appId, userId), false);
  });

  withNodes('heartbeats keep a connection live well past the TTL', 2, async (t, [a, b]) => {
    const [appId, userId] = [randomUUID(), randomUUID()];
    await a!.presence.online(appId, userId, a!.id, 'c1');
    // Nothing announces "still live", so this one waits: three TTLs, checked every 100 ms.
    for (let i = 0; i < 12; i++) {
      await pause(TTL_MS / 4);
      if (!(await b!.presence.isOnline(appId, userId))) return void t.fail(`expired after ${(i + 1) * (TTL_MS / 4)} ms`);
    }
    t.pass('live for 3 TTLs');
  });

  withNodes("a dead node's connections expire within the TTL; its users go offline for everyone", 2, async (t, [a, b]) => {
    const appId = randomUUID();
    const [onlyOnA, alsoOnB] = [randomUUID(), randomUUID()];
    await a!.presence.online(appId, onlyOnA, a!.id, 'c1');
    await a!.presence.online(appId, alsoOnB, a!.id, 'c2');
    await b!.presence.online(appId, alsoOnB, b!.id, 'c3');
    a!.link.down = true;
    const waited = await eventually('the dead node’s user is offline', async () => !(await b!.presence.isOnline(appId, onlyOnA)), TTL_MS * 5);
    t.ok(waited < TTL_MS * 2, `offline within ${waited} ms (ttl ${TTL_MS})`);
    t.equal(await b!.presence.isOnline(appId, alsoOnB), true, 'a user still connected elsewhere stays online');
    t.ok(a!.log.lines.some((l) => l.message.startsWith('presence: heartbeat failed')), 'the failing heartbeat was logged, not thrown');
    // c2 went online a moment after c1, so without a heartbeat between them its expiry trails
    // c1's by that moment: let it pass before ending the user's last live connection.
    await pause(TTL_MS / 4);
    t.equal(await b!.presence.offline(appId, alsoOnB, b!.id, 'c3'), true, 'ending the last live connection is the offline transition');
  });

  withNodes('a node back in touch restores its live connections on the next heartbeat', 2, async (t, [a, b]) => {
    const [appId, userId] = [randomUUID(), randomUUID()];
    await a!.presence.online(appId, userId, a!.id, 'c1');
    a!.link.down = true;
    await eventually('expired', async () => !(await b!.presence.isOnline(appId, userId)), TTL_MS * 5);
    a!.link.down = false;
    await eventually('restored', () => b!.presence.isOnline(appId, userId), HEARTBEAT_MS * 10);
    t.pass('online again');
  });

  withNodes('close() ends the node’s connections at once, without waiting for the TTL', 2, async (t, [a, b]) => {
    const [appId, userId] = [randomUUID(), randomUUID()];
    await a!.presence.online(appId, userId, a!.id, 'c1');
    await a!.presence.online(appId, userId, a!.id, 'c2');
    await a!.presence.close();
    t.equal(await b!.presence.isOnline(appId, userId), false);
  });

  withNodes('presence is per application: the same user id in two apps is two users', 1, async (t, [a]) => {
    const [app1, app2, userId] = [randomUUID(), randomUUID(), randomUUID()];
    await a!.presence.online(app1, userId, a!.id, 'c1');
    t.equal(await a!.presence.isOnline(app2, userId), false);
    t.equal(await a!.presence.online(app2, userId, a!.id, 'c1'), true);
    t.equal(await a!.presence.offline(app1, userId, a!.id, 'c1'), true);
    t.equal(await a!.presence.isOnline(app2, userId), true);
  });
}
