import t from 'tap';
import type { Tracked } from '../../node/webhooks/owner-queue.ts';
import { TrackedEvents } from '../../node/webhooks/tracked-events.ts';

// The events a webhook owner queue tracks (node/webhooks/tracked-events.ts): an array of slots,
// checked here against a map by id doing the same adds and removes.
const tracked = (id: string): Tracked => ({ event: { id, appId: 'app', type: 'message.new', body: '{}' }, done: [], waiting: 1, queue: undefined as never, slot: -1 });

t.test('adds and removes in any order: the same events, in the order added, as a map would hold', async (t) => {
  let seed = 7;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const events = new TrackedEvents();
  const reference = new Map<string, Tracked>();
  const removed: Tracked[] = [];
  let made = 0;
  let mismatches = 0;
  for (let step = 0; step < 60_000; step++) {
    const live = [...reference.values()];
    // Mostly in order, as deliveries finish; sometimes one held back for a long while.
    if (live.length === 0 || random() < 0.5) {
      const e = tracked(`evt_${String(made++).padStart(8, '0')}`);
      events.add(e);
      reference.set(e.event.id, e);
    } else {
      const pick = random() < 0.9 ? live[Math.floor(random() * Math.min(8, live.length))]! : live[live.length - 1]!;
      if (!events.remove(pick)) mismatches++;
      reference.delete(pick.event.id);
      removed.push(pick);
    }
    if (step % 997 === 0 && [...events.values()].map((e) => e.event.id).join() !== [...reference.keys()].join()) mismatches++;
    if (events.size !== reference.size) mismatches++;
  }
  t.equal(mismatches, 0, `60,000 adds and removes, ${made} events: always what the map holds, in order`);
  t.same([...events.ids()].sort(), [...reference.keys()].sort(), 'ids: those tracked');
  t.equal(removed.filter((e) => events.remove(e)).length, 0, 'an event removed already is not removed again, whatever its slot became');
  for (const e of [...events.values()]) events.remove(e);
  t.equal(events.size, 0, 'all removed');
  t.same([...events.values()], [], 'nothing left');
});

t.test('an event held at the front does not keep the finished ones behind it in memory', async (t) => {
  const events = new TrackedEvents();
  const held = tracked('evt_held');
  events.add(held);
  let most = 0;
  let failed = 0;
  for (let i = 0; i < 100_000; i++) {
    const e = tracked(`evt_${i}`);
    events.add(e);
    most = Math.max(most, events.slots);
    if (!events.remove(e)) failed++;
  }
  t.equal(failed, 0, 'each of 100,000 removed');
  t.equal(events.size, 1, 'one left');
  t.ok(most <= 2 * 1 + 1024 + 2, `the holes are squeezed out: at most ${most} slots held for 1 event and the one in hand, not 100,001`);
  t.equal(events.remove(held), true, 'the held one is still found, at its new slot');
  t.equal(events.size, 0);
});

t.test('an event that was never added is not removed', async (t) => {
  const events = new TrackedEvents();
  const a = tracked('evt_a');
  events.add(a);
  t.equal(events.remove(tracked('evt_a')), false, 'another object with the same id is not the one tracked');
  t.equal(events.remove(a), true);
  t.equal(events.remove(a), false, 'nor twice');
});
