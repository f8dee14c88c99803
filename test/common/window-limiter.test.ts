import t from 'tap';
import { WindowLimiter } from '../../common/limits/index.ts';

/** A clock the test moves by hand. */
function fakeClock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

t.test('allows up to the limit, then refuses with the time left in the window', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(3, 10_000, clock.now);
  for (let i = 1; i <= 3; i++) t.same(limiter.hit('k'), { allowed: true, retryAfterSeconds: 10 }, `hit ${i}`);
  clock.advance(4_000);
  t.same(limiter.check('k'), { allowed: false, retryAfterSeconds: 6 }, 'check at the limit refuses');
  t.same(limiter.hit('k'), { allowed: false, retryAfterSeconds: 6 }, 'the 4th hit is refused');
  clock.advance(2_500);
  t.same(limiter.hit('k'), { allowed: false, retryAfterSeconds: 3.5 }, 'still refused, less time left');
});

t.test('check does not count', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(2, 1_000, clock.now);
  t.same(limiter.check('k'), { allowed: true, retryAfterSeconds: 0 }, 'an unseen key');
  for (let i = 0; i < 5; i++) t.equal(limiter.check('k').allowed, true);
  t.equal(limiter.hit('k').allowed, true);
  t.equal(limiter.check('k').allowed, true, 'one of two used');
  t.equal(limiter.hit('k').allowed, true);
  t.equal(limiter.check('k').allowed, false, 'both used');
});

t.test('keys are counted separately', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(1, 1_000, clock.now);
  t.equal(limiter.hit('a').allowed, true);
  t.equal(limiter.hit('a').allowed, false);
  t.equal(limiter.hit('b').allowed, true, 'another key has its own window');
});

t.test('the window expires and the count starts over', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(2, 10_000, clock.now);
  limiter.hit('k');
  limiter.hit('k');
  t.equal(limiter.hit('k').allowed, false);
  clock.advance(9_999);
  t.equal(limiter.hit('k').allowed, false, 'one millisecond before the end');
  clock.advance(1);
  t.same(limiter.check('k'), { allowed: true, retryAfterSeconds: 0 }, 'at the end of the window');
  t.same(limiter.hit('k'), { allowed: true, retryAfterSeconds: 10 }, 'a new window opens');
  t.equal(limiter.hit('k').allowed, true);
  t.equal(limiter.hit('k').allowed, false, 'and fills up again');
});

t.test('expired windows of other keys are swept without affecting live ones', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(1, 1_000, clock.now);
  limiter.hit('old');
  clock.advance(500);
  limiter.hit('live');
  clock.advance(600);
  t.equal(limiter.hit('fresh').allowed, true);
  t.equal(limiter.hit('old').allowed, true, 'the expired key starts over');
  t.equal(limiter.hit('live').allowed, false, 'the live key is still counted');
});

t.test('reset forgets a key', async (t) => {
  const clock = fakeClock();
  const limiter = new WindowLimiter(1, 60_000, clock.now);
  limiter.hit('k');
  limiter.hit('other');
  t.equal(limiter.hit('k').allowed, false);
  limiter.reset('k');
  t.same(limiter.check('k'), { allowed: true, retryAfterSeconds: 0 });
  t.same(limiter.hit('k'), { allowed: true, retryAfterSeconds: 60 });
  t.equal(limiter.hit('other').allowed, false, 'other keys are untouched');
  t.doesNotThrow(() => limiter.reset('never-seen'));
});
