import type { Test } from 'tap';
import { HeartbeatMembership, ownerOf, type Membership, type NodeInfo } from '../../node/bus/index.ts';
import { eventually, pause, recordingLog, SwitchedLeases, type OpenedLeases } from './bus-helpers.ts';

const TTL_MS = 400;
const HEARTBEAT_MS = 100;
const POLL_MS = 50;

interface Node {
  id: string;
  membership: Membership;
  link: SwitchedLeases;
  /** Every list this node's onChange listener was given, as node ids. */
  changes: string[][];
  log: ReturnType<typeof recordingLog>;
}

const ids = (nodes: readonly NodeInfo[]) => nodes.map((n) => n.nodeId);
const last = (node: Node) => node.changes.at(-1) ?? [];

/**
 * The behaviour of Membership (node/bus/membership.ts), run over each Leases store: `open(n)`
 * gives n handles on one fresh namespace, one per simulated node.
 */
export function membershipConformance(t: Test, name: string, open: (n: number) => Promise<OpenedLeases>): void {
  const withNodes = (title: string, n: number, body: (t: Test, nodes: Node[]) => Promise<void>) =>
    t.test(`${name} membership: ${title}`, async (t) => {
      const opened = await open(n);
      const nodes = opened.stores.map((store, i): Node => {
        const link = new SwitchedLeases(store);
        const log = recordingLog();
        const membership = new HeartbeatMembership(link, { ttlMs: TTL_MS, heartbeatMs: HEARTBEAT_MS, pollMs: POLL_MS, log });
        const node: Node = { id: `node-${i}`, membership, link, changes: [], log };
        membership.onChange((live) => void node.changes.push(ids(live)));
        return node;
      });
      t.teardown(async () => {
        for (const node of nodes) node.link.down = false;
        await Promise.all(nodes.map((node) => node.membership.close()));
        await opened.close();
      });
      await body(t, nodes);
    });

  const joinAll = (nodes: Node[]) => Promise.all(nodes.map((n) => n.membership.join(n.id, { url: `http://${n.id}.test`, rpc: `${n.id}.test:9000`, version: '1.0.0' })));

  withNodes('joined nodes are live, with their details, in the same order everywhere', 3, async (t, nodes) => {
    await joinAll(nodes);
    const everyone = nodes.map((n) => n.id);
    for (const node of nodes) {
      const live = await node.membership.live();
      t.same(ids(live), everyone, `${node.id} sees all three`);
      const self = live.find((n) => n.nodeId === node.id);
      t.equal(self?.url, `http://${node.id}.test`);
      t.equal(self?.rpc, `${node.id}.test:9000`, 'the node-to-node address travels with the entry');
      t.equal(self?.version, '1.0.0');
      t.ok(self && !Number.isNaN(Date.parse(self.joinedAt)), 'joinedAt is a timestamp');
    }
    await eventually('every listener has heard of all three', () => nodes.every((n) => last(n).join() === everyone.join()), 2_000);
    t.pass('listeners told');
    await t.rejects(nodes[0]!.membership.join('again', { url: 'x', rpc: 'x:1', version: '1' }), 'one join per instance');
    const late: string[][] = [];
    nodes[1]!.membership.onChange((live) => void late.push(ids(live)));
    await nodes[1]!.membership.refresh();
    t.same(late, [everyone], 'a listener added later hears the current list once');
  });

  withNodes('a node that leaves is gone at once; listeners hear it once', 3, async (t, nodes) => {
    const [a, b, c] = nodes as [Node, Node, Node];
    await joinAll(nodes);
    await eventually('a has heard of all three', () => last(a).length === 3, 2_000);
    await c.membership.leave();
    t.same(ids(await b.membership.live()), [a.id, b.id], 'gone from live() without waiting for the TTL');
    await a.membership.refresh();
    t.same(last(a), [a.id, b.id]);
    const heard = a.changes.length;
    // Absence of repeats can only be shown by waiting: several polls with nothing changed.
    await pause(POLL_MS * 6);
    t.equal(a.changes.length, heard, 'an unchanged list is not reported again');
  });

  withNodes('a node that stops heartbeating drops out within the TTL (plus one poll for listeners)', 3, async (t, nodes) => {
    const [a, b, c] = nodes as [Node, Node, Node];
    await joinAll(nodes);
    await eventually('every node has heard of all three', () => nodes.every((n) => last(n).length === 3), 2_000);
    c.link.down = true;
    const waited = await eventually('a hears that c is gone', () => last(a).join() === [a.id, b.id].join(), TTL_MS * 5);
    t.ok(waited < TTL_MS + POLL_MS + HEARTBEAT_MS * 2, `noticed after ${waited} ms (ttl ${TTL_MS}, poll ${POLL_MS})`);
    t.same(ids(await b.membership.live()), [a.id, b.id]);
    t.ok(c.log.lines.some((l) => l.message.startsWith('membership: heartbeat failed')), 'the cut node logged its failing heartbeat');
    t.same(last(c), [a.id, b.id, c.id], 'the cut node keeps its last known list');
    c.link.down = false;
    await eventually('c is back once its heartbeat lands', () => last(a).length === 3, TTL_MS * 5);
    t.pass('rejoined by heartbeat');
  });

  withNodes('placement over the live list agrees on every node and follows it', 3, async (t, nodes) => {
    const [a, b, c] = nodes as [Node, Node, Node];
    await joinAll(nodes);
    const chats = Array.from({ length: 200 }, (_, i) => `app/chat-${i}`);
    const owners = async (node: Node) => {
      const live = ids(await node.membership.live());
      return chats.map((k) => ownerOf(k, live));
    };
    const [onA, onB, onC] = await Promise.all([owners(a), owners(b), owners(c)]);
    t.same(onA, onB);
    t.same(onB, onC);
    t.same(new Set(onA), new Set([a.id, b.id, c.id]), 'every node owns some chats');
    await b.membership.leave();
    const after = await owners(a);
    t.ok(
      chats.every((_, i) => (onA[i] === b.id ? after[i] !== b.id : after[i] === onA[i])),
      'only the chats of the node that left moved',
    );
  });
}
