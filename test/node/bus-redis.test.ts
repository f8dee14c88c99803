import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { channelOf, RedisBus } from '../../node/bus/index.ts';
import { requireService } from '../helpers/index.ts';
import { busConformance } from './bus-conformance.ts';

const redis = await requireService('redis', (line) => t.comment(line));
if (!redis) t.pass('skipped: redis not running');
else {
  const url = `redis://${redis.host}:${redis.port}`;
  const admin = new Redis(url);
  t.teardown(() => admin.quit());
  busConformance(t, 'redis', async (n) => {
    // A prefix per test, so parallel runs on one Redis never see each other.
    const prefix = `test-${randomUUID()}:`;
    const buses = await Promise.all(Array.from({ length: n }, (_, i) => RedisBus.connect({ url, nodeId: `node-${i}`, prefix })));
    return {
      buses,
      subscribers: async (topic) => {
        const [, count] = (await admin.pubsub('NUMSUB', channelOf(prefix, topic))) as [string, number];
        return Number(count);
      },
      close: async () => void (await Promise.all(buses.map((b) => b.close()))),
    };
  });
}
