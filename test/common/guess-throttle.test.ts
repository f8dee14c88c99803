import t from 'tap';
import { GuessThrottle } from '../../control/auth/guess-throttle.ts';

/** A throttle of 3 free failures and a 15-minute window on a clock the test moves. */
function throttle() {
  const clock = { ms: 1_000_000 };
  return { clock, guesses: new GuessThrottle(3, 900_000, 900_000, () => clock.ms) };
}

t.test('the wait after a failure runs from its answer, however long the check took', async (t) => {
  const { clock, guesses } = throttle();
  for (let i = 0; i < 2; i++) {
    t.ok(guesses.attempt('a@example.com', '10.0.0.1').allowed, `free failure ${i + 1}`);
    guesses.failed('a@example.com', '10.0.0.1');
  }
  t.ok(guesses.attempt('a@example.com', '10.0.0.1').allowed, 'the third guess is taken');
  // Its password check takes 1.5 s (a loaded machine), longer than the first wait of 1 s.
  clock.ms += 1500;
  guesses.failed('a@example.com', '10.0.0.1');
  clock.ms += 100;
  const refused = guesses.attempt('a@example.com', '10.0.0.1');
  t.notOk(refused.allowed, 'a guess right after the answer waits');
  t.equal(Math.ceil(refused.retryAfterSeconds), 1, 'for the rest of the full second');
  t.ok(guesses.attempt('a@example.com', '10.0.0.2').allowed, 'the same account from another address is not held');

  clock.ms += 900;
  t.ok(guesses.attempt('a@example.com', '10.0.0.1').allowed, 'after the wait, one more guess is taken');
  clock.ms += 1500;
  guesses.failed('a@example.com', '10.0.0.1');
  const second = guesses.attempt('a@example.com', '10.0.0.1');
  t.equal(Math.ceil(second.retryAfterSeconds), 2, 'and the next wait is two full seconds from that answer');
});

t.test('guesses in flight together are held by the count taken at arrival', async (t) => {
  const { guesses } = throttle();
  const taken = Array.from({ length: 10 }, () => guesses.attempt('b@example.com', '10.0.0.1').allowed);
  t.same(taken, [true, true, true, false, false, false, false, false, false, false], 'only three are checked');
  for (let i = 0; i < 3; i++) guesses.failed('b@example.com', '10.0.0.1');
  t.notOk(guesses.attempt('b@example.com', '10.0.0.1').allowed, 'the right password right after is held too');
});

t.test('a success clears the count; a failure of a forgotten pair does nothing', async (t) => {
  const { clock, guesses } = throttle();
  for (let i = 0; i < 2; i++) {
    guesses.attempt('c@example.com', '10.0.0.1');
    guesses.failed('c@example.com', '10.0.0.1');
  }
  guesses.attempt('c@example.com', '10.0.0.1');
  guesses.succeeded('c@example.com', '10.0.0.1');
  guesses.failed('c@example.com', '10.0.0.1');
  for (let i = 0; i < 3; i++) t.ok(guesses.attempt('c@example.com', '10.0.0.1').allowed, `guess ${i + 1} after the success`);
  clock.ms += 900_001;
  t.ok(guesses.attempt('c@example.com', '10.0.0.1').allowed, 'the window ends the count');
});
