import t from 'tap';
import { EventIds, eventTime, justAfter, RETRY_SCHEDULE, retryDelay } from '../../common/webhooks/index.ts';

t.test('retry delays: 1 s, then doubling to a 10-minute cap, each within ±20 %', async (t) => {
  for (let failures = 1; failures <= 20; failures++) {
    const base = Math.min(RETRY_SCHEDULE.capMs, 1000 * 2 ** (failures - 1));
    t.equal(retryDelay(failures, () => 0), Math.round(base * 0.8), `after ${failures} failures: at least`);
    t.equal(retryDelay(failures, () => 1), Math.round(base * 1.2), `after ${failures} failures: at most`);
  }
  t.equal(retryDelay(10_000, () => 0.5), RETRY_SCHEDULE.capMs, 'a huge count stays at the cap');
  // Attempts until the 24-hour give-up: a receiver back within minutes is reached within minutes.
  let elapsed = 0;
  let attempts = 1;
  while (elapsed + retryDelay(attempts, () => 0.5) <= RETRY_SCHEDULE.giveUpMs) elapsed += retryDelay(attempts++, () => 0.5);
  t.ok(attempts > 140 && attempts < 160, `${attempts} attempts in 24 hours`);
});

t.test('event ids sort in the order they are made, and floor() is below every later one', async (t) => {
  const ids = new EventIds();
  const made: string[] = [];
  for (let i = 0; i < 5000; i++) made.push(ids.next(1_700_000_000_000 + Math.floor(i / 1000)));
  t.same([...made].sort(), made, 'lexical order is creation order, within and across milliseconds');
  t.equal(new Set(made).size, made.length, 'unique');
  t.equal(eventTime(made[0]!), 1_700_000_000_000);
  const floor = ids.floor(1_600_000_000_000);
  t.ok(floor <= ids.next(1_600_000_000_000), 'a clock that went back still makes ids above floor()');
  t.ok(justAfter(made[10]!) > made[10]! && justAfter(made[10]!) < made[11]!, 'justAfter() is between an id and the next');
});
