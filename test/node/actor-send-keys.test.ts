import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ChatActor, type SendResult } from '../../node/chat/actor.ts';
import type { EventSink } from '../../node/chat/events.ts';
import { CHAT_LIMITS } from '../../node/chat/limits.ts';
import type { StoredMessage } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

/**
 * Idempotency keys in the chat's actor (send-keys.ts): a retry of a recent send costs no store
 * read, a new key's store lookup runs outside the chat's queue (lookups of queued sends overlap),
 * and a key pushed out of memory is still found in the store, even when it was pushed out while
 * a lookup that missed it waited for its turn.
 */
const NOW = '2030-01-01T00:00:00.000Z';

function setup() {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const { chat, ids } = fake.groupChat(appId, 2, NOW);
  const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  // Every write admitted: these tests queue more than a chat's default bound.
  const actor = new ChatActor(appId, chat.id, { store: fake.store, events: sink, now: () => new Date(NOW), admission: { admit: () => undefined } });
  // Each lookup by key, counted, and held while `gate` is set.
  const lookups = { started: 0, gate: undefined as Promise<void> | undefined };
  const byClientKey = fake.store.messages.byClientKey.bind(fake.store.messages);
  fake.store.messages.byClientKey = async (...args): Promise<StoredMessage | undefined> => {
    lookups.started++;
    await lookups.gate;
    return byClientKey(...args);
  };
  return { fake, ids, actor, lookups };
}
const sent = (r: unknown) => r as SendResult;
const ticks = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

t.test('a retry of a recent send is answered from the actor, with no store lookup', async (t) => {
  const { actor, ids, lookups } = setup();
  t.ok(await actor.load());
  const first = sent(await actor.send(ids[0]!, { content: 'hi', clientKey: 'k1' }));
  t.equal(lookups.started, 1, 'a key the actor has not seen is looked up once');
  const retry = sent(await actor.send(ids[0]!, { content: 'hi', clientKey: 'k1' }));
  t.equal(retry.created, false);
  t.equal(retry.message.messageId, first.message.messageId, 'the first message');
  t.equal(lookups.started, 1, 'the retry read nothing');
  const other = sent(await actor.send(ids[1]!, { content: 'hi', clientKey: 'k1' }));
  t.equal(other.created, true, 'keys are per sender');
});

t.test('the store lookups of queued keyed sends overlap; the sends keep their order', async (t) => {
  const { actor, ids, lookups, fake } = setup();
  t.ok(await actor.load());
  let open!: () => void;
  lookups.gate = new Promise<void>((resolve) => (open = resolve));
  const sends = Array.from({ length: 5 }, (_, i) => actor.send(ids[0]!, { content: `m${i}`, clientKey: `k${i}` }));
  await ticks();
  // In the chat's queue, the second lookup would start only once the first had answered.
  t.equal(lookups.started, 5, 'all five lookups are under way before any answers');
  open();
  const results = (await Promise.all(sends)).map(sent);
  t.same(results.map((r) => r.message.seq), [1, 2, 3, 4, 5], 'seqs in the order the sends came');
  t.same(fake.puts.flatMap((p) => p.messages.map((m) => m.content)), ['m0', 'm1', 'm2', 'm3', 'm4']);
});

t.test('a key pushed out of memory is found in the store', async (t) => {
  const { actor, ids, lookups, fake } = setup();
  t.ok(await actor.load());
  const first = sent(await actor.send(ids[0]!, { content: 'first', clientKey: 'old' }));
  for (let i = 0; i <= CHAT_LIMITS.recentKeys; i++) await actor.send(ids[0]!, { content: `m${i}`, clientKey: `k${i}` });
  const before = lookups.started;
  const retry = sent(await actor.send(ids[0]!, { content: 'first', clientKey: 'old' }));
  t.equal(retry.created, false);
  t.equal(retry.message.messageId, first.message.messageId);
  t.equal(lookups.started, before + 1, 'looked up in the store');
  t.equal(fake.puts.flatMap((p) => p.messages).length, CHAT_LIMITS.recentKeys + 2, 'nothing stored twice');
});

t.test('a lookup that missed a key stored and pushed out of memory before its turn is made again', async (t) => {
  const { actor, ids, fake } = setup();
  t.ok(await actor.load());
  // All queued at once: the duplicate's lookup starts before the original has run, and finds nothing.
  const original = actor.send(ids[0]!, { content: 'once', clientKey: 'x' });
  const between = Array.from({ length: CHAT_LIMITS.recentKeys + 2 }, (_, i) => actor.send(ids[0]!, { content: `m${i}`, clientKey: `k${i}` }));
  const duplicate = actor.send(ids[0]!, { content: 'once', clientKey: 'x' });
  const [a, b] = [sent(await original), sent(await duplicate)];
  await Promise.all(between);
  t.equal(a.created, true);
  t.equal(b.created, false, 'the duplicate finds the original');
  t.equal(b.message.messageId, a.message.messageId);
  t.equal(fake.puts.flatMap((p) => p.messages).filter((m) => m.clientKey === 'x').length, 1, 'stored once');
});
