import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ApiError } from '../../common/index.ts';
import { boundedQueue, countedRefusals } from '../../node/chat/admission.ts';
import { ChatActor, type ActorDeps, type SendResult } from '../../node/chat/actor.ts';
import type { ChatEvent, EventSink } from '../../node/chat/events.ts';
import { ActorRegistry } from '../../node/chat/registry.ts';
import { LocalChatOps } from '../../node/chat/local-ops.ts';
import { runHere } from '../../node/chat/service.ts';
import { FencedError } from '../../node/store/index.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

const NOW = '2030-01-01T00:00:00.000Z';

/** A chat with `users` members (the first is its owner) in a fresh fake store, and what its actor publishes. */
function setup(users = 2, deps: Partial<ActorDeps> = {}) {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const { chat, ids } = fake.groupChat(appId, users, NOW);
  const events: ChatEvent[] = [];
  const sink: EventSink = { chatEvent: (_appId, e) => void events.push(e), threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const actorDeps: ActorDeps = { store: fake.store, events: sink, now: () => new Date(NOW), ...deps };
  const actor = new ChatActor(appId, chat.id, actorDeps);
  return { fake, appId, chat, ids, events, actor, actorDeps };
}
const seqsOf = (events: ChatEvent[]) => events.filter((e) => e.type === 'message.new').map((e) => (e as { seq: number }).seq);
const ticks = async (n = 10) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

t.test('actor: concurrent sends get gapless seqs, each once, published in seq order', async (t) => {
  const { actor, ids, events, fake } = setup(3);
  t.ok(await actor.load());
  const results = await Promise.all(Array.from({ length: 300 }, (_, i) => actor.send(ids[i % 3]!, { content: `m${i}` })));
  const seqs = results.map((r) => (r as SendResult).message.seq);
  t.same([...seqs].sort((a, b) => a - b), Array.from({ length: 300 }, (_, i) => i + 1), 'seqs 1..300, none twice, none missing');
  t.same(seqsOf(events), Array.from({ length: 300 }, (_, i) => i + 1), 'events in seq order');
  t.same(fake.puts.flatMap((p) => p.messages.map((m) => m.seq)), seqs.slice().sort((a, b) => a - b), 'written in seq order');
  t.ok(fake.puts.every((p, i) => i === 0 || p.fence!.from.seq === fake.puts[i - 1]!.fence!.to.seq), 'each batch fenced on the head the previous one left');
});

t.test('actor: a send is acknowledged, and its event published, only once its batch is durable', async (t) => {
  const { actor, ids, events, fake } = setup();
  await actor.load();
  fake.holding = true;
  let acked = 0;
  const sends = [1, 2, 3].map((n) => actor.send(ids[0]!, { content: `m${n}` }).then((r) => (acked++, r)));
  const [first] = await fake.heldPuts(1);
  await ticks();
  t.equal(acked, 0, 'no acknowledgement while the write is in flight');
  t.same(events, [], 'and no event');
  t.same(first!.messages.map((m) => m.seq), [1], 'the first send went out alone; the others wait for it');
  first!.release();
  const [, second] = await fake.heldPuts(2);
  t.same(second!.messages.map((m) => m.seq), [2, 3], 'the next two were batched while the first was written');
  await ticks();
  t.equal(acked, 1);
  t.same(seqsOf(events), [1]);
  second!.release();
  await Promise.all(sends);
  t.same(seqsOf(events), [1, 2, 3]);
});

t.test('actor: a failed write refuses everything pending, and the actor is replaced', async (t) => {
  const { actor, ids, events, fake } = setup();
  await actor.load();
  fake.holding = true;
  const outcomes = [1, 2, 3].map((n) => actor.send(ids[0]!, { content: `m${n}` }).then((r) => (r instanceof ApiError ? r.code : 'ok'), (e: Error) => e.message));
  const [first] = await fake.heldPuts(1);
  first!.fail(new Error('disk gone'));
  const refused = await Promise.all(outcomes);
  t.equal(refused[0], 'disk gone', 'the write that failed');
  t.ok(refused.slice(1).every((o) => o === 'disk gone' || o === 'UNAVAILABLE'), `and every send behind it is refused (${refused.join(', ')})`);
  t.equal(fake.puts.length, 1, 'nothing more was written');
  t.same(events, [], 'nothing published');
  t.equal(actor.status, 'broken');
  const after = await actor.send(ids[0]!, { content: 'later' });
  t.ok(after instanceof ApiError && after.code === 'UNAVAILABLE', 'later operations are refused until the registry replaces it');
});

t.test('actor: a fenced write (another writer moved the head) makes a fresh actor reload, and the operation runs again', async (t) => {
  const { appId, chat, ids, events, fake, actorDeps } = setup();
  const registry = new ActorRegistry(actorDeps, { idleMs: 60_000 });
  t.teardown(() => registry.close());
  const ops = new LocalChatOps(fake.store, registry);
  const p = { appId, userId: ids[0]! };
  const first = await runHere(ops, 'send', [p, chat.id, { content: 'one' }]);
  t.equal((first as SendResult).message.seq, 1);
  // Another node wrote seqs 2..5 meanwhile (it briefly believed it owned the chat).
  fake.moveHead(appId, chat.id, { seq: 5, rev: 5 });
  const second = await runHere(ops, 'send', [p, chat.id, { content: 'two' }]);
  t.equal((second as SendResult).message.seq, 6, 'numbered after the head the other writer left, never reusing 2..5');
  t.same(fake.puts.map((w) => w.messages.map((m) => m.seq)), [[1], [2], [6]], 'the refused batch wrote nothing; the retry went on from the stored head');
  t.same(seqsOf(events), [1, 6], 'only durable messages were published');
});

t.test('actor: a retried send with the same idempotency key returns the first message', async (t) => {
  const { actor, ids, fake } = setup();
  await actor.load();
  const [a, b] = await Promise.all([actor.send(ids[0]!, { content: 'hi', clientKey: 'k1' }), actor.send(ids[0]!, { content: 'hi', clientKey: 'k1' })]);
  t.equal((a as SendResult).created, true);
  t.equal((b as SendResult).created, false, 'a concurrent duplicate waits for the original');
  t.equal((b as SendResult).message.messageId, (a as SendResult).message.messageId);
  const later = await actor.send(ids[0]!, { content: 'hi', clientKey: 'k1' });
  t.equal((later as SendResult).created, false, 'a later retry finds it in the store');
  const other = await actor.send(ids[1]!, { content: 'hi', clientKey: 'k1' });
  t.equal((other as SendResult).created, true, 'keys are per sender');
  t.equal(fake.puts.flatMap((w) => w.messages).length, 2);
});

t.test('actor: past its queue bound a chat refuses new writes at once, with a retry hint, and counts them', async (t) => {
  let counted = 0;
  const { actor, ids, fake } = setup(2, { admission: countedRefusals(boundedQueue({ maxQueued: 4, maxWaitMs: 60_000, floor: 0 }), () => counted++) });
  await actor.load();
  fake.holding = true;
  const accepted = [1, 2, 3, 4].map((n) => actor.send(ids[0]!, { content: `m${n}` }));
  const refused = await actor.send(ids[0]!, { content: 'm5' });
  t.ok(refused instanceof ApiError && refused.code === 'RATE_LIMITED', 'the fifth is refused');
  t.equal((refused as ApiError).extra.retryAfterSeconds, 1);
  t.equal(counted, 1, 'the refusal is counted, the writes taken are not');
  (await fake.heldPuts(1))[0]!.release();
  fake.holding = false;
  for (const put of fake.held.slice(1)) put.release();
  t.same((await Promise.all(accepted)).map((r) => (r as SendResult).message.seq), [1, 2, 3, 4], 'the accepted ones are all written');
  const again = await actor.send(ids[0]!, { content: 'm5' });
  t.equal((again as SendResult).message.seq, 5, 'and once the queue drains, sends are taken again');
  t.equal(counted, 1);
});

t.test('actor: past its queueing delay bound a chat refuses new writes', async (t) => {
  const { actor, ids, fake } = setup(2, { admission: boundedQueue({ maxQueued: 1000, maxWaitMs: 30, floor: 0 }) });
  await actor.load();
  fake.holding = true;
  const first = actor.send(ids[0]!, { content: 'slow' });
  const [put] = await fake.heldPuts(1);
  await new Promise((resolve) => setTimeout(resolve, 60));
  const refused = await actor.send(ids[0]!, { content: 'behind' });
  t.ok(refused instanceof ApiError && refused.code === 'RATE_LIMITED', 'refused while the oldest write has waited too long');
  put!.release();
  await first;
});

t.test('actor: the delay bound refuses only once a floor of writes wait, so a stall of a quiet chat refuses nothing', async (t) => {
  const { actor, ids, fake } = setup(2, { admission: boundedQueue({ maxQueued: 1000, maxWaitMs: 30, floor: 3 }) });
  await actor.load();
  fake.holding = true;
  const taken = [actor.send(ids[0]!, { content: 'slow' })];
  const [put] = await fake.heldPuts(1);
  await new Promise((resolve) => setTimeout(resolve, 60));
  taken.push(actor.send(ids[0]!, { content: 'second' }), actor.send(ids[0]!, { content: 'third' }));
  const refused = await actor.send(ids[0]!, { content: 'fourth' });
  t.ok(refused instanceof ApiError && refused.code === 'RATE_LIMITED', 'with three waiting behind a slow write, the fourth is refused');
  put!.release();
  fake.holding = false;
  for (const held of fake.held.slice(1)) held.release();
  t.same((await Promise.all(taken)).map((r) => (r as SendResult).message.seq), [1, 2, 3], 'the two taken during the stall, under the floor, are written after the first');
});

t.test('actor: a fenced membership write breaks the actor; nothing is changed in memory', async (t) => {
  const { actor, appId, chat, ids, fake } = setup(3);
  await actor.load();
  fake.fenceMembership = new FencedError(appId, chat.id, { seq: 0, rev: 0 }, { id: 'other-node' });
  const outcome = await actor.setRole(ids[0]!, ids[1]!, 'admin').then((r) => r, (e: unknown) => e);
  t.ok(outcome instanceof FencedError, 'the write is refused');
  t.equal(actor.role(ids[1]!), 'member', 'the role is unchanged');
  t.equal(actor.status, 'broken', 'the actor gives way to a fresh one (which forwards to the holder)');
});
