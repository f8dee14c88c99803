import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { LmdbNodeStore, type OutboxEvent } from '../../node/store/index.ts';
import { EndpointCache } from '../../node/webhooks/endpoints.ts';
import { WebhookDispatcher } from '../../node/webhooks/dispatcher.ts';
import type { ConsumerJob, OutboxConsumer } from '../../node/webhooks/outbox-consumer.ts';
import { IN_MEMORY_EVENTS } from '../../node/webhooks/owner-queue.ts';

/**
 * More events than a dispatcher tracks in memory (IN_MEMORY_EVENTS) wait in the outbox and are
 * read back as room frees up: each is handed to its consumer exactly once, none lost, none twice,
 * whatever finishes while others wait (README, "Webhooks": delivery is at least once, and without
 * a crash, once).
 */
t.test('an outbox past what is tracked in memory: every event once', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'outbox-overflow-'));
  const store = LmdbNodeStore.open(dir);
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  const seen = new Map<string, number>();
  const held: ConsumerJob[] = [];
  let holding = true;
  const consumer: OutboxConsumer = {
    takes: (e) => e.type === 'test.work',
    messageEvents: () => [],
    deliver: (job) => {
      seen.set(job.event.id, (seen.get(job.event.id) ?? 0) + 1);
      if (holding) held.push(job);
      else job.finish();
    },
  };
  const source = { list: async () => [], get: async () => undefined, update: async () => 'not-found' as const, recordDeliveries: async () => {} };
  const dispatcher = new WebhookDispatcher({
    outbox: store.outbox,
    owner: () => store.writers.self.id,
    source,
    endpoints: new EndpointCache(source, 60_000),
    adopts: () => false,
    verify: async () => true,
    changed: () => {},
    allowInsecure: true,
    consumers: [consumer],
    log: pino({ level: 'silent' }),
    reportMs: 100,
    scanMs: 60_000,
  });
  t.teardown(() => dispatcher.close());
  const write = async (n: number) => {
    const events: OutboxEvent[] = Array.from({ length: n }, (_, i) => dispatcher.make('app', 'test.work', { i }));
    await store.outbox.append(store.writers.self.id, events);
    dispatcher.written(events, true);
  };
  // The first IN_MEMORY_EVENTS are held (tracked), the next 500 wait in the store.
  await write(IN_MEMORY_EVENTS + 500);
  t.equal(held.length, IN_MEMORY_EVENTS, 'as many handed over as are tracked');
  // Room frees up: the held finish, and new events come while the waiting ones are still unread.
  holding = false;
  for (const job of held.splice(0)) job.finish();
  await write(300);
  for (const until = Date.now() + 20_000; seen.size < IN_MEMORY_EVENTS + 800 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 1_000));
  t.equal(seen.size, IN_MEMORY_EVENTS + 800, 'every event handed over');
  t.same([...seen.values()].filter((n) => n > 1).length, 0, 'none twice');
});
