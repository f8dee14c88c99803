import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import driver from 'cassandra-driver';
import t from 'tap';
import { STATEMENT_OPTIONS, type Cql } from '../../common/cassandra/index.ts';
import { OutcomeUnknownError, toClientError } from '../../common/index.ts';
import type { SendResult } from '../../node/chat/actor.ts';
import type { EventSink } from '../../node/chat/events.ts';
import { ActorRegistry } from '../../node/chat/registry.ts';
import { CassandraNodeStore, FencedError, HOLD, type Chat } from '../../node/store/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';
import { haSharedNodeKeyspace, requireHaTopology } from '../helpers/services.ts';

/**
 * A real unknown outcome on the replicated ring (three Cassandra nodes, keyspace at RF 3): two
 * replicas are frozen (SIGSTOP) as a send's write leaves, so it reaches only its coordinator, which
 * applies it and answers a write timeout.
 * That coordinator, the one replica with the row, is then frozen, the other two thawed, and the
 * sender retries with its key on another node. Without the tail settled by the node that takes the
 * chat, the retry stores a second message and the first comes back when its replica does: read at
 * ALL, the chat holds the message twice.
 */
const ha = await requireHaTopology((line) => t.comment(line));
if (!ha) t.plan(0, 'the replicated topology is not running');
else {
  // On a fresh ring the shared keyspace's schema takes minutes to build (haSharedNodeKeyspace).
  t.setTimeout(600_000);
  const [first, second] = ha.cassandraAddresses;
  const pidAt = (host: string, port: number): number => {
    const out = execFileSync('ss', ['-Hltnp', `src ${host}:${port}`], { encoding: 'utf8' });
    const pid = /pid=(\d+)/.exec(out)?.[1];
    if (!pid) throw new Error(`no process listens on ${host}:${port}`);
    return Number(pid);
  };
  const port = Number(ha.cassandra.split(',')[0]!.split(':')[1] ?? 9042);
  const pids = ha.cassandraAddresses.map((host) => pidAt(host, port));
  const frozen = new Set<number>();
  const freeze = (pid: number) => (process.kill(pid, 'SIGSTOP'), frozen.add(pid));
  const thaw = (pid: number) => (process.kill(pid, 'SIGCONT'), frozen.delete(pid));
  // Traffic to other nodes' storage port is refused with a reset, in an nftables table of this
  // process's own (named as test/helpers/faults.ts names its tables, so its sweep removes a leftover).
  const table = `chat_faults_${process.pid}_uo`;
  const storagePort = Number(process.env.HA_CASSANDRA_STORAGE_PORT ?? 7000);
  const nft = (...args: string[]) => execFileSync('nft', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const cut = (addresses: string[]) => {
    nft('add', 'table', 'inet', table);
    nft('add', 'chain', 'inet', table, 'out', '{ type filter hook output priority 0; }');
    nft('add', 'rule', 'inet', table, 'out', 'ip', 'daddr', `{ ${addresses.join(', ')} }`, 'tcp', 'dport', String(storagePort), 'reject', 'with', 'tcp', 'reset');
  };
  const heal = () => {
    try {
      nft('delete', 'table', 'inet', table);
    } catch {
      /* not there */
    }
  };
  const restore = () => {
    heal();
    [...frozen].forEach((pid) => process.kill(pid, 'SIGCONT'));
  };
  t.teardown(restore);
  process.once('exit', restore);

  const admin = new driver.Client({ contactPoints: ha.cassandraAddresses, protocolOptions: { port }, localDataCenter: 'datacenter1', queryOptions: { ...STATEMENT_OPTIONS } });
  /** A client whose every request goes to one node (its coordinator). */
  const pinned = (host: string) =>
    new driver.Client({
      contactPoints: [host],
      protocolOptions: { port },
      localDataCenter: 'datacenter1',
      queryOptions: { ...STATEMENT_OPTIONS },
      policies: { loadBalancing: new driver.policies.loadBalancing.WhiteListPolicy(new driver.policies.loadBalancing.DCAwareRoundRobinPolicy('datacenter1'), [`${host}:${port}`]) },
      socketOptions: { readTimeout: 12_000 },
    });
  const [viaFirst, viaSecond] = [pinned(first!), pinned(second!)];
  t.teardown(async () => {
    [...frozen].forEach(thaw);
    await Promise.all([admin, viaFirst, viaSecond].map((c) => c.shutdown()));
  });
  const keyspace = await haSharedNodeKeyspace(admin);

  const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const node = (store: CassandraNodeStore) => {
    const registry = new ActorRegistry({ store, events: sink, now: () => new Date(NOW) }, { idleMs: 60_000 });
    t.teardown(() => registry.close());
    return registry;
  };
  const send = async (registry: ActorRegistry, appId: string, chatId: string, userId: string, key: string): Promise<SendResult> => {
    const result = await (await registry.get(appId, chatId))!.send(userId, { content: `content of ${key}`, clientKey: key });
    if (!('message' in result)) throw new Error(`refused: ${result.code}`);
    return result;
  };

  t.test('a send whose write timed out on the ring, retried on another node with its key: one message, read at ALL', async (t) => {
    // Node A's hold lasts 20 s, so while two replicas are frozen its second send goes straight to
    // its message write: no renewal (a compare-and-set, which could not reach a quorum) is due.
    // The other two replicas are cut off at the moment node A sends the message's write, after the
    // key lookup that precedes it (a quorum read, which they would otherwise fail too): what the
    // coordinator sends them is refused with a reset, so nothing waits in a socket to land later.
    let cutAtWrite = false;
    const atWrite: Cql = {
      execute: (query, params, options) => viaFirst.execute(query, params, options),
      batch: (statements, options) => {
        if (cutAtWrite && statements.some((s) => s.query.includes('.chat_messages '))) {
          cutAtWrite = false;
          cut(ha.cassandraAddresses.slice(1));
        }
        return viaFirst.batch(statements, options);
      },
    };
    const storeA = CassandraNodeStore.open(atWrite, keyspace, { id: 'node-a' }, { ...HOLD, ttlSeconds: 20 });
    const storeB = CassandraNodeStore.open(viaSecond, keyspace, { id: 'node-b' }, HOLD);
    const appId = randomUUID();
    const userId = randomUUID();
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: userId, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    await storeA.chats.create(chat, [{ appId, chatId: chat.id, userId, role: 'owner', joinedAt: NOW, readSeq: 0 }]);
    const nodeA = node(storeA);
    await send(nodeA, appId, chat.id, userId, 'k0');

    cutAtWrite = true;
    const started = Date.now();
    const failed = await send(nodeA, appId, chat.id, userId, 'k1').then(() => undefined, (e: unknown) => e);
    t.ok(failed instanceof OutcomeUnknownError, `the write timed out after ${Date.now() - started} ms: not acknowledged, not reported as failed`);
    t.equal(toClientError(failed).code, 'OUTCOME_UNKNOWN');
    const cause = ((failed as Error | undefined)?.cause as Error | undefined)?.cause as { code?: number; message?: string } | undefined;
    t.equal(cause?.code, 0x1100, `the message write itself timed out on its coordinator: ${String(cause?.message).slice(0, 120)}`);
    t.match(String(cause?.message), /LOCAL_QUORUM/, 'at LOCAL_QUORUM (a message write, not a compare-and-set)');

    // The only replica with the row is frozen (its hints for the others wait with it); the other
    // two serve again.
    freeze(pids[0]!);
    heal();
    const nodeB = node(storeB);
    const deadline = Date.now() + 60_000;
    let retried: SendResult | undefined;
    while (!retried) {
      retried = await send(nodeB, appId, chat.id, userId, 'k1').catch((e: unknown) => {
        if (Date.now() > deadline) throw e;
        if (!(e instanceof FencedError) && !(e instanceof Error && /unavailable/i.test(e.message))) throw e;
        return new Promise<undefined>((resolve) => setTimeout(resolve, 200));
      });
    }
    t.equal(retried.created, true, 'the two replicas that serve never had the row: the retry stores the message');
    t.ok(retried.message.seq > 2, `past the numbers node A had taken (seq ${retried.message.seq})`);

    thaw(pids[0]!);
    // Every replica answers, so whatever the first one kept is merged into the result.
    const all = { ...STATEMENT_OPTIONS, consistency: driver.types.consistencies.all };
    let rows: { key: string; seq: number }[] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await admin.execute(`SELECT seq, client_key FROM ${keyspace}.chat_messages WHERE app_id = ? AND chat_id = ? AND block = 0`, [appId, chat.id], all);
        rows = result.rows.map((r) => ({ key: String(r.get('client_key')), seq: Number(r.get('seq')) })).sort((a, b) => a.seq - b.seq);
        break;
      } catch (error) {
        if (attempt > 60) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    t.same(rows, [{ key: 'k0', seq: 1 }, { key: 'k1', seq: retried.message.seq }], 'k1 is stored once: the row its first write left on one replica stays deleted');
    await storeB.writers.release(appId, chat.id);
  });
  t.test('a read mark whose compare-and-set timed out on the ring is raised once the ring answers, not refused', async (t) => {
    // The two other replicas are frozen as the mark's compare-and-set leaves node A's coordinator,
    // after the read that precedes it: the Paxos round cannot reach a quorum and times out (its
    // outcome unknown to the caller), and they are thawed 2.5 s later. The store reads the mark
    // again and finishes; without that it answered 503 (BACKEND_UNAVAILABLE), which the
    // conformance suite also met when concurrent marks contended on one chat.
    let freezeAtCas = false;
    const atCas: Cql = {
      execute: (query, params, options) => {
        if (freezeAtCas && query.includes('SET read_seq = ?') && query.includes('IF read_seq = ?')) {
          freezeAtCas = false;
          pids.slice(1).forEach(freeze);
          setTimeout(() => pids.slice(1).forEach(thaw), 2500);
        }
        return viaFirst.execute(query, params, options);
      },
      batch: (statements, options) => viaFirst.batch(statements, options),
    };
    const store = CassandraNodeStore.open(atCas, keyspace, { id: 'node-marks' }, HOLD);
    const appId = randomUUID();
    const userId = randomUUID();
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: userId, createdAt: NOW, updatedAt: NOW, lastSeq: 0, lastActivityAt: NOW };
    await store.chats.create(chat, [{ appId, chatId: chat.id, userId, role: 'owner', joinedAt: NOW, readSeq: 0 }]);
    freezeAtCas = true;
    const started = Date.now();
    const mark = await store.chats.markRead(appId, chat.id, userId, 5).catch((e: unknown) => e);
    t.equal(mark, 5, `the mark is raised (${Date.now() - started} ms): ${mark instanceof Error ? mark.message : ''}`);
    t.ok(Date.now() - started >= 1500, 'after the round that timed out');
    t.equal((await store.chats.member(appId, chat.id, userId))?.readSeq, 5, 'and stored');
  });
}
