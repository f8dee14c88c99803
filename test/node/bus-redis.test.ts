import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { channelOf, RedisBus, RedisLeases, type BusTopic } from '../../node/bus/index.ts';
import { requireService } from '../helpers/index.ts';
import { busConformance } from './bus-conformance.ts';
import { eventually, recordingLog, type OpenedLeases } from './bus-helpers.ts';
import { leasesConformance } from './bus-leases-conformance.ts';
import { membershipConformance } from './bus-membership-conformance.ts';
import { presenceConformance } from './presence-conformance.ts';

const redis = await requireService('redis', (line) => t.comment(line));
if (!redis) {
  t.comment('!!! Redis bus, presence and membership suites SKIPPED: no Redis (scripts/services.sh start redis) !!!');
  t.skip('redis not running', () => undefined);
} else {
  const url = `redis://${redis.host}:${redis.port}`;
  const admin = new Redis(url);
  t.teardown(() => admin.quit());
  // A prefix per test, so parallel runs (and parallel tests) on one Redis never see each other.
  const freshPrefix = () => `test-${randomUUID()}:`;

  for (const sharded of [false, true]) {
    busConformance(t, sharded ? 'redis sharded' : 'redis', async (n) => {
      const prefix = freshPrefix();
      const buses = await Promise.all(Array.from({ length: n }, (_, i) => RedisBus.connect({ url, nodeId: `node-${i}`, prefix, sharded, log: recordingLog() })));
      return {
        buses,
        subscribers: async (topic) => {
          const [, count] = (await admin.call('PUBSUB', sharded ? 'SHARDNUMSUB' : 'NUMSUB', channelOf(prefix, topic))) as [string, number];
          return Number(count);
        },
        close: async () => void (await Promise.all(buses.map((b) => b.close()))),
      };
    });
  }

  const openLeases = async (n: number): Promise<OpenedLeases> => {
    const prefix = freshPrefix();
    const stores = await Promise.all(Array.from({ length: n }, () => RedisLeases.connect({ url, prefix, log: recordingLog() })));
    return { stores, close: async () => void (await Promise.all(stores.map((s) => s.close()))) };
  };
  leasesConformance(t, 'redis', openLeases);
  presenceConformance(t, 'redis', openLeases);
  membershipConformance(t, 'redis', openLeases);

  /** One of our connections as Redis lists it (CLIENT LIST), by its name. */
  const clientLine = async (name: string) => ((await admin.call('CLIENT', 'LIST')) as string).split('\n').find((l) => l.includes(` name=${name} `));
  /** Closes one of our connections from the server side, as a network fault would. */
  const kill = async (name: string) => {
    const id = (await clientLine(name))?.match(/^id=(\d+) /)?.[1];
    if (!id) throw new Error(`no connection named ${name}`);
    await admin.call('CLIENT', 'KILL', 'ID', id);
  };
  const numsub = async (channel: string) => Number(((await admin.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1]);

  t.test('redis: after losing its subscriber connection a node re-subscribes to every topic, including those taken meanwhile', async (t) => {
    const prefix = freshPrefix();
    const log = recordingLog();
    // A slow reconnect, so the test can act while the subscriber is away.
    const options = { url, prefix, log, redis: { retryStrategy: () => 300 } };
    const [a, b] = await Promise.all([RedisBus.connect({ ...options, nodeId: 'a' }), RedisBus.connect({ ...options, nodeId: 'b' })]);
    t.teardown(() => Promise.all([a.close(), b.close()]));
    const before: BusTopic = { kind: 'chat', appId: randomUUID(), chatId: randomUUID() };
    const during: BusTopic = { kind: 'user', appId: randomUUID(), userId: randomUUID() };
    const got: string[] = [];
    b.subscribe(before, (p) => void got.push(String(p)));
    await b.ready();
    await kill(`${prefix}bus:b:sub`);
    await eventually('b notices', () => b.ready().then(() => false, () => true), 2_000, 5);
    b.subscribe(during, (p) => void got.push(String(p)));
    await eventually('b is back', () => b.ready().then(() => true, () => false), 5_000);
    await eventually('both subscriptions are in place', async () => (await numsub(channelOf(prefix, before))) === 1 && (await numsub(channelOf(prefix, during))) === 1, 2_000);
    a.publish(before, 'one');
    a.publish(during, 'two');
    await eventually('both delivered', () => got.length === 2, 2_000);
    t.same(got, ['one', 'two']);
  });

  /** Bus `a` publishes, bus `b` listens on one chat topic; Redis reconnects after `retryMs`. */
  const publisherAndListener = async (t: Test, retryMs: number) => {
    const prefix = freshPrefix();
    const log = recordingLog();
    const options = { url, prefix, log, redis: { retryStrategy: () => retryMs } };
    const [a, b] = await Promise.all([RedisBus.connect({ ...options, nodeId: 'a' }), RedisBus.connect({ ...options, nodeId: 'b' })]);
    t.teardown(() => Promise.all([a.close(), b.close()]));
    const topic: BusTopic = { kind: 'chat', appId: randomUUID(), chatId: randomUUID() };
    const got: string[] = [];
    b.subscribe(topic, (p) => void got.push(String(p)));
    await b.ready();
    return { a, b, topic, got, log, prefix };
  };

  t.test('redis: publications while the publisher is disconnected are lost and counted, never thrown nor queued', async (t) => {
    const { a, b, topic, got, log, prefix } = await publisherAndListener(t, 500);
    await kill(`${prefix}bus:a:pub`);
    await eventually('a notices', () => a.ready().then(() => false, () => true), 2_000, 5);
    a.publish(topic, 'lost');
    await eventually('the failure is counted', () => a.stats().publishFailures === 1, 1_000, 5);
    t.ok(log.lines.some((l) => l.message.startsWith('bus: publications lost')), 'and logged');
    await eventually('a is back', () => a.ready().then(() => true, () => false), 5_000);
    a.publish(topic, 'delivered');
    await eventually('delivered', () => got.length > 0, 2_000);
    await b.ready();
    t.same(got, ['delivered'], 'the lost publication was not re-sent later');
  });

  t.test('redis: a publisher whose connection breaks with publications unanswered publishes again once back', async (t) => {
    const { a, topic, got, prefix } = await publisherAndListener(t, 200);
    // Redis holds PUBLISH while writes are paused: these are sent and never answered, as when
    // Redis dies under load. Then the connection breaks.
    await admin.call('CLIENT', 'PAUSE', '2000', 'WRITE');
    try {
      for (let i = 0; i < 20; i++) a.publish(topic, `in flight ${i}`);
      await eventually('Redis holds the publisher blocked', async () => / flags=\w*b/.test((await clientLine(`${prefix}bus:a:pub`)) ?? ''), 2_000, 5);
      await kill(`${prefix}bus:a:pub`);
    } finally {
      await admin.call('CLIENT', 'UNPAUSE');
    }
    await eventually('a notices', () => a.ready().then(() => false, () => true), 2_000, 5);
    await eventually('a is back', () => a.ready().then(() => true, () => false), 5_000);
    a.publish(topic, 'after');
    await eventually('the next publication is delivered', () => got.includes('after'), 3_000);
    t.ok(got.every((p) => p === 'after'), 'the unanswered ones were not re-sent');
  });

  t.test('redis: leases leave no keys behind, and keys expire with their last member', async (t) => {
    const prefix = freshPrefix();
    const leases = await RedisLeases.connect({ url, prefix });
    t.teardown(() => leases.close());
    const keys = async () => (await admin.keys(`${prefix}*`)).sort();
    await leases.renew('k', [{ member: 'm', value: 'v' }], 10_000);
    t.same(await keys(), [`${prefix}l:{k}`, `${prefix}l:{k}:v`]);
    const ttl = await admin.pttl(`${prefix}l:{k}`);
    t.ok(ttl > 9_000 && ttl <= 10_000, `the set expires with its member (${ttl} ms)`);
    await leases.remove('k', ['m']);
    t.same(await keys(), [], 'removing the last member removes both keys');
    await leases.renew('gone', [{ member: 'm', value: 'v' }], 200);
    await eventually('expired keys vanish', async () => (await keys()).length === 0, 2_000);
    t.pass('nothing left');
  });
}
