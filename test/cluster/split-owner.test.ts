import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { ApiError, BackendUnavailableError } from '../../common/index.ts';
import { migrate } from '../../common/cassandra/index.ts';
import { ownerOf, type Membership, type MembershipListener, type NodeInfo } from '../../node/bus/index.ts';
import type { SendResult } from '../../node/chat/actor.ts';
import type { ChatEvent, EventSink } from '../../node/chat/events.ts';
import { ActorRegistry } from '../../node/chat/registry.ts';
import { ChatService, runHere, type ChatOpName } from '../../node/chat/service.ts';
import { ChatPlacement, ClusterRouter, HeldElsewhereError } from '../../node/cluster/index.ts';
import { CassandraNodeStore, FencedError, LmdbNodeStore, nodeMigrations, type Chat, type NodeStore } from '../../node/store/index.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';

/**
 * Two nodes that both believe they own one chat: each has an empty view of the node list, so
 * each places every chat on itself (as two nodes do for a moment while a change of the list
 * spreads, or when one cannot see the other). Both send and change the chat's members at once.
 * Each node has its own store instance (its own writer); a call forwarded to the other node runs
 * there as the node-to-node server would run it.
 */
const NOW = new Date('2030-01-01T00:00:00.000Z');
const noMembership: Membership = {
  join: async () => undefined,
  live: async () => [],
  onChange: () => () => undefined,
  refresh: async () => undefined,
  leave: async () => undefined,
  close: async () => undefined,
};

interface TestNode {
  id: string;
  chats: ChatService;
  events: ChatEvent[];
  registry: ActorRegistry;
  /** Operations this node tried here, found the chat held by the other, and forwarded there. */
  forwarded: number;
}

/** A node list the test sets, heard by every node at once. */
class SetMembership implements Membership {
  private readonly listeners = new Set<MembershipListener>();
  join = async () => undefined;
  live = async () => [];
  refresh = async () => undefined;
  leave = async () => undefined;
  close = async () => undefined;
  onChange(listener: MembershipListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(ids: string[]): void {
    const nodes: NodeInfo[] = ids.map((nodeId) => ({ nodeId, url: nodeId, rpc: nodeId, version: 'test', joinedAt: NOW.toISOString() }));
    for (const listener of this.listeners) listener(nodes);
  }
}

/** Every event either node published, in the order they were published. */
function startNode(id: string, store: NodeStore, peers: Map<string, TestNode>, timeline: ChatEvent[], membership: Membership = noMembership): TestNode {
  store.writers.announce({ id, address: id });
  const events: ChatEvent[] = [];
  const sink: EventSink = {
    chatEvent: (_appId, e) => {
      events.push(e);
      timeline.push(e);
    },
    userEvent: () => undefined,
    threadEvent: () => undefined,
    membershipMoved: () => undefined,
  };
  const placement = new ChatPlacement(id, membership);
  const registry = new ActorRegistry({ store, events: sink, now: () => NOW }, { idleMs: 60_000, placedElsewhere: (appId, chatId) => placement.placedElsewhere(appId, chatId) });
  // What the node-to-node server does with a forwarded call: run it here; a chat held by yet
  // another node is answered `held`, which the caller gets as HeldElsewhereError.
  const rpc = {
    call: async (address: string, op: string, _appId: string, _chatId: string, args: unknown[]) => {
      node.forwarded++;
      const peer = peers.get(address)!;
      return runHere(peer.chats.local, op as ChatOpName, args as never).catch((error: unknown) => {
        throw error instanceof FencedError && error.holder ? new HeldElsewhereError(error.holder) : error;
      });
    },
  };
  const chats = new ChatService({ store, actors: registry, now: () => NOW, router: (local) => new ClusterRouter(placement, { failoverMs: 10_000, rpc, local: (op, args) => runHere(local, op, args) }) });
  const node: TestNode = { id, chats, events, registry, forwarded: 0 };
  peers.set(id, node);
  return node;
}

/** Retries an operation whose outcome the service could not tell (503), as a client does; its idempotency key makes that safe. */
async function retrying<T>(op: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await op();
      if (result instanceof ApiError && (result.code === 'UNAVAILABLE' || result.code === 'RATE_LIMITED') && attempt < 20) continue;
      return result;
    } catch (error) {
      if (!(error instanceof BackendUnavailableError) || attempt >= 20) throw error;
    }
  }
}

/** Two nodes, each over a store instance of its own, and a group chat of the first `members` of `userCount` users. */
async function twoNodes(t: Test, open: () => Promise<NodeStore>, userCount: number, members: number, membership?: Membership) {
  const [storeA, storeB] = [await open(), await open()];
  const peers = new Map<string, TestNode>();
  const timeline: ChatEvent[] = [];
  const [a, b] = [startNode('node-a', storeA, peers, timeline, membership), startNode('node-b', storeB, peers, timeline, membership)];
  t.teardown(() => {
    a.registry.close();
    b.registry.close();
  });
  const appId = randomUUID();
  const users = Array.from({ length: userCount }, (_, i) => ({ appId, id: randomUUID(), username: `u${i}`, displayName: `U${i}`, createdAt: NOW.toISOString(), updatedAt: NOW.toISOString() }));
  for (const u of users) await storeA.users.create(u);
  const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'split', createdBy: users[0]!.id, createdAt: NOW.toISOString(), updatedAt: NOW.toISOString(), lastSeq: 0, lastActivityAt: NOW.toISOString() };
  const initial = users.slice(0, members);
  await storeA.chats.create(chat, initial.map((u, i) => ({ appId, chatId: chat.id, userId: u.id, role: i === 0 ? 'owner' : 'member', joinedAt: NOW.toISOString(), readSeq: 0 })));
  return { a, b, storeA, storeB, timeline, appId, users, chat, initial };
}

async function splitOwners(t: Test, open: () => Promise<NodeStore>) {
  const { a, b, storeA, storeB, timeline, appId, users, chat, initial } = await twoNodes(t, open, 10, 6);
  const owner = { appId, userId: users[0]!.id };
  const as = (i: number) => ({ appId, userId: users[i]!.id });

  // Both nodes at once, in two rounds: 4 senders of 20 messages a round (two per node), and
  // membership changes from each node: A adds users one by one; B flips one member's role.
  const acked = new Map<string, number>();
  const sender = (node: TestNode, i: number, round: number) => async () => {
    for (let n = 0; n < 20; n++) {
      const content = `${node.id}/u${i}/${round}/${n}`;
      const r = await retrying(() => node.chats.send(as(i), chat.id, { content, clientKey: content }));
      if (r instanceof ApiError) throw new Error(`${content}: ${r.code}`);
      acked.set(content, (r as SendResult).message.seq);
    }
  };
  const roles: string[] = [];
  const flips = (list: ('admin' | 'member')[]) => async () => {
    for (const role of list) {
      const r = await retrying(() => b.chats.setRole(owner, chat.id, users[5]!.id, role));
      if (r instanceof ApiError) throw new Error(`setRole: ${r.code}`);
      roles.push(role);
    }
  };
  const adds = (list: typeof users) => async () => {
    for (const u of list) {
      const r = await retrying(() => a.chats.addMembers(owner, chat.id, [u.id], 'member'));
      if (r instanceof ApiError) throw new Error(`addMembers: ${r.code}`);
    }
  };
  const round = (n: number, roleList: ('admin' | 'member')[], added: typeof users) =>
    Promise.all([sender(a, 1, n)(), sender(a, 2, n)(), sender(b, 3, n)(), sender(b, 4, n)(), flips(roleList)(), adds(added)()]);
  await round(1, ['admin', 'member', 'admin'], users.slice(6, 8));
  // The chat changes hands: the node that held it hands it back (as on a change of the node
  // list) and the other writes first. Both go on believing they own it.
  const holder = a.forwarded === 0 ? a : b;
  const other = holder === a ? b : a;
  await holder.registry.flushAll();
  holder.registry.dropUnowned(() => false);
  const first = await retrying(() => other.chats.send(as(other === a ? 1 : 3), chat.id, { content: 'handover', clientKey: 'handover' }));
  acked.set('handover', (first as SendResult).message.seq);
  await round(2, ['member', 'admin'], users.slice(8, 9));
  t.equal(acked.size, 161, 'every send was acknowledged');

  const stored = await storeA.messages.afterSeq(appId, chat.id, 0, 1000);
  const seqs = stored.map((m) => m.seq);
  t.equal(new Set(seqs).size, seqs.length, 'no seq assigned twice');
  const storedSeq = new Map(stored.map((m) => [m.content, m.seq]));
  const lost = [...acked.keys()].filter((c) => !storedSeq.has(c));
  t.same(lost, [], 'no acknowledged message lost');
  t.equal(stored.length, 161, 'none stored twice');
  t.same([...acked].filter(([c, seq]) => storedSeq.get(c) !== seq), [], 'each stored with the seq it was acknowledged with');
  const published = timeline.filter((e) => e.type === 'message.new').map((e) => (e as { seq: number }).seq);
  t.equal(new Set(published).size, published.length, 'each message published once, by the node that wrote it');

  const members = await storeB.chats.members(appId, chat.id);
  t.same(members.map((m) => m.userId).sort(), [...initial, ...users.slice(6, 9)].map((u) => u.id).sort(), 'every membership change applied, none lost');
  t.equal(members.find((m) => m.userId === users[5]!.id)?.role, roles.at(-1), 'the role is the last one acknowledged: changes applied in order');
  const roleEvents = timeline.filter((e) => e.type === 'membership.changed' && e.change === 'role' && e.userId === users[5]!.id).map((e) => (e as { role: string }).role);
  t.same(roleEvents, roles, 'and announced once each, in the order they were acknowledged');
  t.ok(a.forwarded > 0 && b.forwarded > 0, `each node in turn found the chat held by the other and followed there (${a.forwarded} from A, ${b.forwarded} from B)`);
  t.ok(a.events.some((e) => e.type === 'message.new') && b.events.some((e) => e.type === 'message.new'), 'and both wrote the chat, each while it held it');
}

/**
 * The node list settles on an owner while the chat is still held by the node that wrote it before
 * (its actor still live: it got operations since the change). Under steady load from both nodes,
 * the owner must take the chat within about a second and keep it: the previous holder stops at
 * the first operation it gets, hands the chat back, and refuses to take it again.
 */
async function ownerTakesOver(t: Test, open: () => Promise<NodeStore>) {
  const membership = new SetMembership();
  const { a, b, storeA, appId, users, chat } = await twoNodes(t, open, 4, 4, membership);
  const as = (i: number) => ({ appId, userId: users[i]!.id });
  const owner = ownerOf(`${appId}/${chat.id}`, [a.id, b.id]) === a.id ? a : b;
  const previous = owner === a ? b : a;

  // With no node list yet each node places every chat on itself: the previous holder writes first.
  const first = await retrying(() => previous.chats.send(as(0), chat.id, { content: 'before', clientKey: 'before' }));
  t.notOk(first instanceof ApiError, 'the previous holder writes the chat');
  membership.set([a.id, b.id]);
  const changedAt = Date.now();
  let tookOverMs: number | undefined;
  const watch = setInterval(() => {
    if (tookOverMs === undefined && owner.events.some((e) => e.type === 'message.new')) tookOverMs = Date.now() - changedAt;
  }, 10);
  const acked = new Map<string, number>([['before', (first as SendResult).message.seq]]);
  const sender = (node: TestNode, i: number) => async () => {
    for (let n = 0; n < 30; n++) {
      const content = `${node.id}/u${i}/${n}`;
      const r = await retrying(() => node.chats.send(as(i), chat.id, { content, clientKey: content }));
      if (r instanceof ApiError) throw new Error(`${content}: ${r.code}`);
      acked.set(content, (r as SendResult).message.seq);
    }
  };
  await Promise.all([sender(a, 0)(), sender(a, 1)(), sender(b, 2)(), sender(b, 3)()]);
  clearInterval(watch);
  t.equal(acked.size, 121, 'every send was acknowledged');

  const ownerSeqs = owner.events.filter((e) => e.type === 'message.new').map((e) => (e as { seq: number }).seq);
  const previousSeqs = previous.events.filter((e) => e.type === 'message.new').map((e) => (e as { seq: number }).seq);
  t.ok(tookOverMs !== undefined && tookOverMs < 1500, `the owner wrote the chat ${tookOverMs ?? 'never'} ms after the list settled (under 1,500)`);
  t.ok(ownerSeqs.length >= 100, `and wrote most of what followed (${ownerSeqs.length} of 120)`);
  t.same(previousSeqs.filter((seq) => seq > Math.min(...ownerSeqs)), [], 'the previous holder wrote nothing once the owner had');
  const stored = await storeA.messages.afterSeq(appId, chat.id, 0, 1000);
  const storedSeq = new Map(stored.map((m) => [m.content, m.seq]));
  t.equal(stored.length, 121, 'each stored once');
  t.same([...acked].filter(([c, seq]) => storedSeq.get(c) !== seq), [], 'each stored with the seq it was acknowledged with');
}

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  t.test('cassandra: two nodes that both own one chat send and change its members at once: nothing twice, nothing lost, in order', async (t) => {
    const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_split');
    await migrate(client, keyspace, nodeMigrations);
    await splitOwners(t, async () => CassandraNodeStore.open(client, keyspace));
  });
  t.test('cassandra: once the node list settles, the chat moves to its owner and stays there under load', async (t) => {
    const { client, keyspace } = await testKeyspace(t, cassandra, 'chat_takeover');
    await migrate(client, keyspace, nodeMigrations);
    await ownerTakesOver(t, async () => CassandraNodeStore.open(client, keyspace));
  });
}

/** Store instances over one LMDB environment (each its own writer), closed and removed after the test. */
async function lmdbStores(t: Test): Promise<() => Promise<NodeStore>> {
  const dir = await mkdtemp(join(tmpdir(), 'split-'));
  const opened: LmdbNodeStore[] = [];
  t.teardown(async () => {
    for (const s of opened) await s.close();
    await rm(dir, { recursive: true, force: true });
  });
  return async () => {
    const store = LmdbNodeStore.open(dir);
    opened.push(store);
    return store;
  };
}

t.test('lmdb: the same with two store instances over one environment', async (t) => {
  await splitOwners(t, await lmdbStores(t));
});

t.test('lmdb: once the node list settles, the chat moves to its owner and stays there under load', async (t) => {
  await ownerTakesOver(t, await lmdbStores(t));
});
