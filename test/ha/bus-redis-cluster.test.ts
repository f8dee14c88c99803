import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import t from 'tap';
import { Cluster, Redis } from 'ioredis';
import { channelOf, clusterNodeOptions, parseRedisNodes, RedisBus, RedisLeases, type BusTopic, type RedisNodeAddress } from '../../node/bus/index.ts';
import { redisTarget } from '../../bin/cluster.ts';
import { loadConfig } from '../../common/index.ts';
import { busConformance } from '../node/bus-conformance.ts';
import { eventually, recordingLog, type OpenedLeases } from '../node/bus-helpers.ts';
import { leasesConformance } from '../node/bus-leases-conformance.ts';
import { membershipConformance } from '../node/bus-membership-conformance.ts';
import { presenceConformance } from '../node/presence-conformance.ts';
import { haProcess } from '../helpers/nemesis/harness.ts';

// The same suites as bus-redis.test.ts, on a Redis Cluster of three masters and three replicas:
// the HA topology of scripts/services.sh (start --topology ha), or the one HA_REDIS_CLUSTER_NODES
// names. Then a failover: a master killed under a subscribed chat channel.
const DEFAULT_NODES = '127.0.0.21:6379,127.0.0.22:6379,127.0.0.23:6379,127.0.0.24:6379,127.0.0.25:6379,127.0.0.26:6379';
const HOW = 'start it with: scripts/services.sh start --topology ha redis (or point HA_REDIS_CLUSTER_NODES at one)';

/**
 * The cluster's nodes if one of them answers and says cluster_state:ok; otherwise undefined (a
 * loud skip), or with CI=true an error, so the suite can never pass by not running. (A local
 * check, in the manner of requireService in test/helpers/services.ts.)
 */
async function requireRedisCluster(log: (line: string) => void): Promise<RedisNodeAddress[] | undefined> {
  const list = process.env.HA_REDIS_CLUSTER_NODES || DEFAULT_NODES;
  const nodes = parseRedisNodes(list);
  if (nodes instanceof Error) throw new Error(`HA_REDIS_CLUSTER_NODES: ${nodes.message}`);
  let why = 'no node answered';
  for (const node of nodes) {
    const probe = new Redis({ ...node, lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      const info = String(await probe.cluster('INFO'));
      if (/cluster_state:ok/.test(info)) return nodes;
      why = `${node.host}:${node.port} says ${/cluster_state:\w+/.exec(info)?.[0] ?? 'it is no cluster'}`;
    } catch (error) {
      why = `${node.host}:${node.port}: ${(error as Error).message}`;
    } finally {
      probe.disconnect();
    }
  }
  if (process.env.CI === 'true') throw new Error(`no Redis Cluster at ${list} (${why}) and CI=true: ${HOW}`);
  log(`SKIPPED: no Redis Cluster at ${list} (${why}); ${HOW}`);
  return undefined;
}

t.test('REDIS_CLUSTER_NODES: host:port seeds; REDIS_URL still gives the user, password and TLS', async (t) => {
  t.same(parseRedisNodes('10.0.0.1:6379, redis-b:7000,[::1]:6380'), [
    { host: '10.0.0.1', port: 6379 },
    { host: 'redis-b', port: 7000 },
    { host: '::1', port: 6380 },
  ]);
  for (const bad of ['', '10.0.0.1', '10.0.0.1:0', 'a:6379,,b:6379', 'a:99999']) t.type(parseRedisNodes(bad), Error, `${JSON.stringify(bad)} refused`);
  t.same(clusterNodeOptions('rediss://app:s%40cret@ignored:1/3', { tls: { ca: 'CA' } }), { tls: { ca: 'CA' }, username: 'app', password: 's@cret' });
  t.same(clusterNodeOptions('redis://:pw@ignored'), { password: 'pw' });
  t.same(clusterNodeOptions('rediss://x'), { tls: {} });
  const config = (env: Record<string, string>) => loadConfig({ BUS: 'redis', STORE: 'cassandra', ...env });
  t.same(redisTarget(config({ REDIS_URL: 'redis://:pw@h:1' })), { url: 'redis://:pw@h:1', redis: {} }, 'unset: the one Redis at REDIS_URL, as before');
  t.same(redisTarget(config({ REDIS_CLUSTER_NODES: '127.0.0.21:6379,127.0.0.22:6379' })).cluster, [
    { host: '127.0.0.21', port: 6379 },
    { host: '127.0.0.22', port: 6379 },
  ]);
  t.throws(() => config({ REDIS_CLUSTER_NODES: 'redis-a' }), /REDIS_CLUSTER_NODES/, 'a bad list is refused at start');
});

const nodes = await requireRedisCluster((line) => t.comment(line));
if (!nodes) {
  t.comment('!!! Redis Cluster bus, presence and membership suites SKIPPED !!!');
  t.skip('no Redis Cluster running', () => undefined);
} else {
  const url = 'redis://';
  const admin = new Cluster(nodes.map((n) => ({ ...n })));
  admin.on('error', () => undefined);
  t.teardown(() => admin.quit());
  const freshPrefix = () => `test-${randomUUID()}:`;
  const open = (prefix: string, nodeId: string) => RedisBus.connect({ url, cluster: nodes, nodeId, prefix, log: recordingLog() });
  /** Subscribers of a sharded channel as Redis counts them: each master counts its own. */
  const shardSubscribers = async (channel: string) => {
    const counts = await Promise.all(admin.nodes('master').map(async (m) => Number(((await m.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1])));
    return counts.reduce((a, b) => a + b, 0);
  };

  const slotOf = async (key: string) => Number(await admin.cluster('KEYSLOT', key));
  /** The master serving a slot, as the cluster says now. */
  const masterOf = async (slot: number) => {
    const owner = (await admin.cluster('SLOTS')).find(([from, to]) => slot >= from && slot <= to)?.[2];
    return owner && { host: owner[0], port: owner[1], id: owner[2] };
  };

  busConformance(t, 'redis cluster', async (n) => {
    const prefix = freshPrefix();
    const buses = await Promise.all(Array.from({ length: n }, (_, i) => open(prefix, `node-${i}`)));
    return {
      buses,
      subscribers: (topic) => shardSubscribers(channelOf(prefix, topic)),
      close: async () => void (await Promise.all(buses.map((b) => b.close()))),
    };
  });

  const openLeases = async (n: number): Promise<OpenedLeases> => {
    const prefix = freshPrefix();
    const stores = await Promise.all(Array.from({ length: n }, () => RedisLeases.connect({ url, cluster: nodes, prefix, log: recordingLog() })));
    return { stores, close: async () => void (await Promise.all(stores.map((s) => s.close()))) };
  };
  leasesConformance(t, 'redis cluster', openLeases);
  presenceConformance(t, 'redis cluster', openLeases);
  membershipConformance(t, 'redis cluster', openLeases);

  t.test('redis cluster: REDIS_URL at one node of a cluster is refused at start, naming REDIS_CLUSTER_NODES', async (t) => {
    // A single client there got MOVED for every lease key hashed to another master: nodes never
    // saw each other (the node list's slot) or every new socket was closed (presence).
    const url = `redis://${nodes[0]!.host}:${nodes[0]!.port}`;
    await t.rejects(RedisBus.connect({ url, nodeId: 'x', prefix: freshPrefix(), log: recordingLog() }), /is a node of a Redis Cluster.*REDIS_CLUSTER_NODES/, 'the bus');
    await t.rejects(RedisLeases.connect({ url, prefix: freshPrefix(), log: recordingLog() }), /is a node of a Redis Cluster.*REDIS_CLUSTER_NODES/, 'the leases');
  });

  t.test('redis cluster: the two keys of a lease key share a slot, and lease keys spread over every master', async (t) => {
    const prefix = freshPrefix();
    const leases = await RedisLeases.connect({ url, cluster: nodes, prefix });
    t.teardown(() => leases.close());
    const masters = new Set<string>();
    for (const key of ['nodes', ...Array.from({ length: 20 }, () => `p:${randomUUID()}:${randomUUID()}`)]) {
      await leases.renew(key, [{ member: 'm', value: 'v' }], 10_000);
      const [set, values] = [`${prefix}l:{${key}}`, `${prefix}l:{${key}}:v`];
      t.equal(await slotOf(values), await slotOf(set), `${key}: one slot`);
      masters.add((await masterOf(await slotOf(set)))?.id ?? 'none');
      t.equal(await admin.zcard(set), 1, `${key}: stored where the script ran`);
      await leases.remove(key, ['m']);
    }
    t.equal(masters.size, 3, 'the keys are not all on one master (the prefix is not their hash tag)');
    await t.rejects(RedisLeases.connect({ url, cluster: nodes, prefix: 'a{b}:' }), /must not contain/, "a prefix with '{' is refused");
  });

  t.test('redis cluster: a master killed under a subscribed chat: its replica takes over and the channel delivers again, once each, by itself', async (t) => {
    const prefix = freshPrefix();
    const [a, b] = await Promise.all([open(prefix, 'a'), open(prefix, 'b')]);
    const leases = await RedisLeases.connect({ url, cluster: nodes, prefix });
    t.teardown(() => Promise.all([a.close(), b.close(), leases.close()]));
    const topic: BusTopic = { kind: 'chat', appId: randomUUID(), chatId: randomUUID() };
    const got: number[] = [];
    b.subscribe(topic, (p) => void got.push(Number(p)));
    await b.ready();

    const slot = await slotOf(channelOf(prefix, topic));
    const master = (await masterOf(slot))!;
    /** The first of `make()`'s names whose slot `master` serves. */
    const onMaster = async <T>(make: () => T, key: (made: T) => string): Promise<T> => {
      for (;;) {
        const made = make();
        if ((await masterOf(await slotOf(key(made))))?.id === master.id) return made;
      }
    };
    // Another chat on the same master, subscribed while it is dead; a lease key there too.
    const during = await onMaster((): BusTopic => ({ kind: 'chat', appId: topic.appId, chatId: randomUUID() }), (made) => channelOf(prefix, made));
    const leaseKey = await onMaster(() => randomUUID(), (made) => `${prefix}l:{${made}}`);
    const victim = new Redis({ host: master.host, port: master.port });
    const server = String(await victim.info('server'));
    const pid = Number(/process_id:(\d+)/.exec(server)?.[1]);
    const config = /config_file:(\S*)/.exec(server)?.[1] ?? '';
    // A replica that has not caught up refuses to take over: wait until one is in step.
    await eventually(`a replica of ${master.host}:${master.port} is in sync (none is: no failover can happen)`, async () => /slave\d+:.*state=online/.test(String(await victim.info('replication'))), 10_000, 100);
    victim.disconnect();
    t.ok(pid > 0, `master ${master.host}:${master.port} (pid ${pid}) owns slot ${slot}`);
    // The state dir the topology runs from (CI keeps it apart from the default): the restart needs it.
    const { stateDir } = haProcess(master.host, master.port, 'redis');

    // Restart the killed node afterwards (it rejoins as a replica), and wait until it is in step.
    t.teardown(async () => {
      const command = (process.env.HA_REDIS_RESTART ?? 'scripts/services.sh start --topology ha redis').replaceAll('{config}', config);
      execFileSync('sh', ['-c', command], { stdio: 'ignore', env: { ...process.env, SERVICES_STATE_DIR: stateDir } });
      const back = new Redis({ host: master.host, port: master.port, retryStrategy: () => 200 });
      back.on('error', () => undefined);
      await eventually('the killed node is back as an in-step replica', async () => /master_link_status:up/.test(String(await back.info('replication').catch(() => ''))), 30_000, 200);
      back.disconnect();
    });

    // A publication every 10 ms from a, numbered.
    let sent = 0;
    const publishing = setInterval(() => a.publish(topic, String(++sent)), 10);
    t.teardown(() => clearInterval(publishing));
    await eventually('deliveries before the kill', () => got.length > 20, 5_000);

    process.kill(pid, 'SIGKILL');
    // Dead once its port refuses connections (a zombie still answers kill(pid, 0)).
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const socket = connect({ host: master.host, port: master.port });
        socket.once('connect', () => (socket.destroy(), resolve(false)));
        socket.once('error', () => resolve(true));
      });
    await eventually('the master is dead', refused, 5_000, 1);
    const lastBefore = sent;
    t.comment(`killed pid ${pid} after publication ${lastBefore}`);

    // While the slot has no master: a subscription to another chat on the same master.
    const gotDuring: string[] = [];
    b.subscribe(during, (p) => void gotDuring.push(String(p)));

    const killedAt = Date.now();
    const [promotedAt, backAt] = await Promise.all([
      eventually('a replica is promoted', async () => (await masterOf(slot).catch(() => undefined))?.id !== master.id, 15_000, 20).then(() => Date.now()),
      eventually('publications reach the subscriber again', () => got.some((n) => n > lastBefore), 10_000, 5).then(() => Date.now()),
    ]);
    t.comment(`replica promoted ${promotedAt - killedAt} ms after the kill; deliveries resumed ${backAt - killedAt} ms after the kill, ${backAt - promotedAt} ms after the promotion`);
    t.ok(backAt - killedAt <= 10_000, 'delivering again within 10 s of the kill, nothing re-subscribed by hand');
    clearInterval(publishing);

    await eventually('the subscription made during the outage is in effect', async () => {
      a.publish(during, 'after');
      await a.ready().catch(() => undefined);
      return gotDuring.includes('after');
    }, 10_000, 200);
    t.pass('a chat subscribed while its master was dead delivers after the failover');

    // A marker after the last numbered publication: once it is in, every copy that was coming is.
    a.publish(topic, String(sent + 1));
    await eventually('the marker', () => got.includes(sent + 1), 5_000);
    t.equal(new Set(got).size, got.length, `nothing delivered twice (${got.length} of ${sent} delivered)`);
    t.ok(got.every((n, i) => i === 0 || n > got[i - 1]!), 'in publish order');
    t.ok(a.stats().publishFailures > 0, `publications during the failover were lost and counted (${a.stats().publishFailures})`);
    const renewed = await leases.renew(leaseKey, [{ member: 'm', value: '' }], 5_000).then(() => true, () => false);
    t.ok(renewed, 'leases on that master work again');
  });
}
