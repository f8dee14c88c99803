import t from 'tap';
import { EventIds, eventTime } from '../../common/webhooks/index.ts';

// Webhook event ids (common/webhooks/ids.ts): the order an outbox is read in.
t.test('ids sort in the order they are made and carry their time, within a millisecond, across them, and when the clock steps back', async (t) => {
  const ids = new EventIds();
  const at = Date.UTC(2026, 0, 1);
  const made = [...Array.from({ length: 300 }, () => ids.next(at)), ...Array.from({ length: 3 }, (_, i) => ids.next(at + 1 + i)), ids.next(at - 5_000), ids.next(at + 10)];
  t.ok(made.every((id, i) => i === 0 || id > made[i - 1]!), 'each sorts after the one before');
  t.ok(made.every((id) => /^evt_[0-9a-f]{26}$/.test(id)), 'evt_ and 26 hex digits');
  t.same(made.slice(0, 300).map(eventTime), Array(300).fill(at), 'the time of one millisecond');
  t.equal(eventTime(made[300]!), at + 1);
  t.equal(eventTime(made[303]!), at + 3, 'a clock stepping back keeps the last time');
  t.equal(eventTime(made[304]!), at + 10);
  t.ok(ids.floor(at) <= made.at(-1)! && ids.floor(at + 11) > made.at(-1)!, 'floor: a bound of the ids to come');
});

t.test('a millisecond of more than 16,777,216 ids goes on in the next', async (t) => {
  const ids = new EventIds();
  const at = Date.UTC(2026, 0, 1);
  let last = '';
  for (let i = 0; i <= 0xffffff; i++) last = ids.next(at);
  const next = ids.next(at);
  t.equal(eventTime(last), at);
  t.equal(eventTime(next), at + 1, 'the counter spills into the next millisecond');
  t.ok(next > last);
  t.equal(ids.next(at + 1) > next, true, 'and goes on from there');
});
