import t from 'tap';
import { LoadShedder, type LagSource } from '../../common/limits/index.ts';

/** A lag source the test sets by hand. */
function lagOf(initial = 0): LagSource & { lag: number } {
  return { lag: initial, sample() { return this.lag; }, close: () => undefined };
}
const options = { targetLagMs: 30, lagWindows: 1, windowMs: 60_000, maxInFlight: 1000, minShare: 0.05, floor: 0, targetSojournMs: 100, sojournWindows: 2 };
const taken = (shedder: LoadShedder, n: number) => {
  let count = 0;
  for (let i = 0; i < n; i++) {
    const done = shedder.begin();
    if (done) {
      count++;
      done();
    }
  }
  return count;
};

/**
 * One window of load that does not wait for answers: `n` units arrive over 100 ms of the test's
 * clock and stay in progress (the share decides how many are taken), so the queue grows. Returns
 * the ends of those taken.
 */
function arrive(shedder: LoadShedder, clock: { ms: number }, n = 40): Array<(served?: boolean) => void> {
  const ends: Array<(served?: boolean) => void> = [];
  for (let i = 0; i < n; i++) {
    clock.ms += 100 / n;
    const end = shedder.begin();
    if (end) ends.push(end);
  }
  return ends;
}

t.test('load shedder: takes everything while the event loop keeps up', async (t) => {
  const lag = lagOf(5);
  const shedder = new LoadShedder(options, lag);
  t.teardown(() => shedder.close());
  shedder.adjust();
  t.equal(taken(shedder, 1000), 1000);
});

t.test('load shedder: a saturated loop whose queue grows takes a shrinking share, evenly, never none; it recovers once the delay falls', async (t) => {
  const lag = lagOf(80);
  const clock = { ms: 0 };
  const shedder = new LoadShedder(options, lag, () => clock.ms);
  t.teardown(() => shedder.close());
  arrive(shedder, clock);
  shedder.adjust();
  t.equal(shedder.taking, 0.75);
  t.equal(taken(shedder, 1000), 750, 'a quarter refused after one window over the target');
  const spread = Array.from({ length: 8 }, () => (shedder.begin() ? 1 : 0));
  t.same(spread.reduce((a: number, b) => a + b, 0), 6, 'spread evenly: 6 of every 8');
  for (let i = 0; i < 30; i++) {
    arrive(shedder, clock);
    shedder.adjust();
  }
  t.equal(shedder.taking, 0.05, 'down to the floor, not to zero');
  t.equal(taken(shedder, 1000), 50);
  lag.lag = 10;
  for (let i = 0; i < 3; i++) shedder.adjust();
  t.ok(Math.abs(shedder.taking - 0.11) < 1e-9, 'grows back a fiftieth per window');
  for (let i = 0; i < 50; i++) shedder.adjust();
  t.equal(shedder.taking, 1);
});

t.test('load shedder: one late window is a pause, not saturation; late windows in a row cut', async (t) => {
  const lag = lagOf(0);
  const clock = { ms: 0 };
  const shedder = new LoadShedder({ ...options, lagWindows: 2 }, lag, () => clock.ms);
  t.teardown(() => shedder.close());
  const window = () => {
    arrive(shedder, clock);
    shedder.adjust();
  };
  lag.lag = 400;
  window();
  t.equal(shedder.taking, 1, 'a single stall refuses nothing');
  lag.lag = 0;
  window();
  lag.lag = 400;
  window();
  t.equal(shedder.taking, 1, 'nor does another one after a window on time');
  window();
  t.equal(shedder.taking, 0.75, 'the second late window in a row cuts');
  window();
  t.equal(shedder.taking, 0.5625, 'and so does every one after it while the delay lasts and the queue grows');
});

t.test('load shedder: a late loop whose queue stays level (a closed loop at capacity) is cut at most once, when the queue rose', async (t) => {
  const clock = { ms: 0 };
  // The delay rule alone: no unit is ever late for the sojourn rule.
  const shedder = new LoadShedder({ ...options, floor: 4, targetSojournMs: 1e9 }, lagOf(200), () => clock.ms);
  t.teardown(() => shedder.close());
  shedder.adjust();
  t.equal(shedder.taking, 1, 'late with nothing in progress: nothing to cut');
  // Clients start: 100 sends in flight at once, then each sends again once answered.
  const clients = arrive(shedder, clock, 100);
  shedder.adjust();
  t.equal(shedder.taking, 0.75, 'the queue rose while the loop was late: cut');
  const shares: number[] = [];
  for (let w = 0; w < 30; w++) {
    for (let i = 0; i < 60; i++) {
      clock.ms += 100 / 60;
      clients.shift()!(true);
      // A refused client sends again at once (the bench's senders do).
      let again = shedder.begin();
      while (!again) again = shedder.begin();
      clients.push(again);
    }
    shedder.adjust();
    shares.push(shedder.taking);
  }
  t.equal(shedder.busy, 100, 'the queue stayed level');
  // The window after the rise still sees it (a window's mean is half-way up): one cut more at most.
  const cuts = shares.filter((share, i) => share < (shares[i - 1] ?? 0.75)).length;
  t.ok(cuts <= 1, `thirty late windows with the queue level: not cut again after the rise (shares ${shares.map((x) => x.toFixed(2)).join(' ')})`);
  t.equal(shares.at(-1), 1, 'grown back to all');
  for (const end of clients.splice(0)) end(false);
});

t.test('load shedder: below its floor of work in progress it refuses nothing, however late the loop', async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder({ ...options, floor: 3, maxInFlight: 100_000 }, lagOf(500), () => clock.ms);
  t.teardown(() => shedder.close());
  const burst: Array<(served?: boolean) => void> = [];
  for (let i = 0; i < 20; i++) {
    burst.push(...arrive(shedder, clock, 400));
    shedder.adjust();
  }
  t.equal(shedder.taking, 0.05);
  for (const end of burst) end(false);
  const lone = shedder.begin();
  t.ok(lone, 'a lone send after a burst of other work is taken');
  lone!();
  const held = [shedder.begin(), shedder.begin(), shedder.begin()];
  t.ok(held.every((d) => d !== undefined), 'up to the floor, all are taken');
  t.equal(taken(shedder, 100), 5, 'past it, the share applies');
});

t.test('load shedder: work in progress is bounded', async (t) => {
  const shedder = new LoadShedder({ ...options, maxInFlight: 3 }, lagOf(0));
  t.teardown(() => shedder.close());
  const held = [shedder.begin(), shedder.begin(), shedder.begin()];
  t.ok(held.every((d) => d !== undefined));
  t.equal(shedder.begin(), undefined, 'the fourth is refused');
  held[0]!();
  held[0]!();
  t.equal(shedder.busy, 2, 'ending one twice counts once');
  t.ok(shedder.begin(), 'and a slot is free again');
});

t.test('load shedder: measures the real event loop', async (t) => {
  const shedder = new LoadShedder({ ...options, windowMs: 20 });
  t.teardown(() => shedder.close());
  const until = Date.now() + 300;
  const held: Array<(served?: boolean) => void> = [];
  // Block the loop in slices, so the timer sees the delay, while work arrives and stays.
  while (Date.now() < until) {
    const sliceEnd = Date.now() + 60;
    while (Date.now() < sliceEnd) {
      const end = shedder.begin();
      if (end) held.push(end);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  for (const end of held) end(false);
  t.ok(shedder.taking < 1, `a blocked loop whose queue grows lowers the share taken (${shedder.taking})`);
});

t.test("load shedder: a tenant with little in flight is not shed for another tenant's load", async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder({ ...options, floor: 2, maxInFlight: 100_000 }, lagOf(500), () => clock.ms);
  t.teardown(() => shedder.close());
  const burst: Array<(served?: boolean) => void> = [];
  for (let i = 0; i < 20; i++) {
    burst.push(...arrive(shedder, clock, 400));
    shedder.adjust();
  }
  for (const end of burst) end(false);
  t.equal(shedder.taking, 0.05);
  const heavy = Array.from({ length: 200 }, () => shedder.begin('heavy')).filter((d) => d !== undefined);
  t.ok(heavy.length <= 12, `the heavy tenant is shed to the share (${heavy.length} of 200 taken)`);
  const quiet = [shedder.begin('quiet'), shedder.begin('quiet')];
  t.ok(quiet.every((d) => d !== undefined), 'while the quiet tenant, under its floor, is taken whatever the share');
  t.equal(shedder.begin('quiet'), undefined, 'past its floor it is shed like any other');
  quiet[0]!();
  t.ok(shedder.begin('quiet'), 'and under it again once one ends');
});

/** Serves `n` units that each take `ms` on the test's clock, one after another; how many were taken. */
function serve(shedder: LoadShedder, clock: { ms: number }, n: number, ms: number, served = true): number {
  let count = 0;
  for (let i = 0; i < n; i++) {
    const done = shedder.begin();
    if (!done) continue;
    count++;
    clock.ms += ms;
    done(served);
  }
  return count;
}

/** Takes `n` units and keeps them in progress (the queue grows by `n`); returns their ends. */
function hold(shedder: LoadShedder, n: number): Array<(served?: boolean) => void> {
  return Array.from({ length: n }, () => shedder.begin()).filter((d) => d !== undefined);
}

t.test('load shedder: a growing queue behind the process (most units late, window after window) shrinks the share', async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder(options, lagOf(0), () => clock.ms);
  t.teardown(() => shedder.close());
  serve(shedder, clock, 6, 80);
  serve(shedder, clock, 4, 10);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 1, 'a window with most units on time is not late, though some took long');
  serve(shedder, clock, 6, 120);
  serve(shedder, clock, 4, 5);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 1, 'one late window (most units over the target, some quick) is not enough');
  serve(shedder, clock, 6, 120);
  serve(shedder, clock, 4, 5);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 0.75, 'the second late window in a row, the queue growing, shrinks it');
  serve(shedder, clock, 10, 120);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 0.77, 'the count starts over after a cut: the next late window alone does not cut again');
  serve(shedder, clock, 10, 120);
  hold(shedder, 5);
  shedder.adjust();
  t.ok(Math.abs(shedder.taking - 0.5775) < 1e-9, 'the one after it does');
  t.equal(serve(shedder, clock, 40, 120), 23, 'the share is applied');
  serve(shedder, clock, 10, 20);
  shedder.adjust();
  t.ok(Math.abs(shedder.taking - 0.5975) < 1e-9, 'a window on time grows it back, slowly');
});

t.test('load shedder: a level queue (a closed loop at capacity) is not cut, however late; nor is one draining by itself until shedding began', async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder({ ...options, floor: 4 }, lagOf(0), () => clock.ms);
  t.teardown(() => shedder.close());
  // Each client sends again once answered: 100 in progress, always, each taking 250 ms.
  const clients = hold(shedder, 100);
  shedder.adjust();
  for (let w = 0; w < 20; w++) {
    for (let i = 0; i < 60; i++) {
      clock.ms += 2.5;
      clients.shift()!();
      clients.push(...hold(shedder, 1));
    }
    t.equal(shedder.busy, 100);
    shedder.adjust();
  }
  t.equal(shedder.taking, 1, 'twenty late windows with the queue level: nothing shed');
  // The same, but the queue moves by the floor at most: still level.
  clients.push(...hold(shedder, 4));
  for (let i = 0; i < 60; i++) {
    clock.ms += 2.5;
    clients.shift()!();
    clients.push(...hold(shedder, 1));
  }
  shedder.adjust();
  for (let i = 0; i < 60; i++) {
    clock.ms += 2.5;
    clients.shift()!();
    clients.push(...hold(shedder, 1));
  }
  shedder.adjust();
  t.equal(shedder.taking, 1, 'a move within the floor is not a move');
  // Now it drains: each answer is not followed by a send, and the units served are late. With
  // everything taken, that is a stall letting go, and nothing is cut.
  for (let w = 0; w < 3; w++) {
    for (let i = 0; i < 30; i++) {
      clock.ms += 2.5;
      clients.shift()!();
    }
    shedder.adjust();
  }
  t.equal(shedder.taking, 1, 'a late queue draining by itself, everything taken: not cut');
  // It grows again (two sends for each answer), and is cut.
  for (let w = 0; w < 3 && shedder.taking === 1; w++) {
    for (let i = 0; i < 20; i++) {
      clock.ms += 5;
      clients.shift()!();
      clients.push(...hold(shedder, 2));
    }
    shedder.adjust();
  }
  t.equal(shedder.taking, 0.75, 'a late queue that grows is cut');
  // Once shedding, a late queue that shrinks is cut again (draining it faster).
  for (let w = 0; w < 4 && shedder.taking >= 0.75; w++) {
    for (let i = 0; i < 8; i++) {
      clock.ms += 15;
      clients.shift()!();
    }
    shedder.adjust();
  }
  t.ok(shedder.taking < 0.75, `shedding, a shrinking late queue is cut again (${shedder.taking})`);
  for (const end of clients.splice(0)) end(false);
});

t.test('load shedder: a queue growing slowly is cut once its growth since the late streak began adds up to half a window of service', async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder(options, lagOf(0), () => clock.ms);
  t.teardown(() => shedder.close());
  const clients = hold(shedder, 100);
  shedder.adjust();
  // 60 served a window, each late, and 4 more sent than answered: 30 more in progress takes 8 windows.
  const windows: number[] = [];
  for (let w = 1; w <= 12 && shedder.taking === 1; w++) {
    for (let i = 0; i < 60; i++) {
      clock.ms += 100 / 60;
      clients.shift()!();
      clients.push(...hold(shedder, i % 15 === 0 ? 2 : 1));
    }
    shedder.adjust();
    windows.push(w);
  }
  t.equal(shedder.taking, 0.75, 'cut in the end');
  t.ok(windows.length >= 8 && windows.length <= 10, `not before the growth added up (${windows.length} windows)`);
  for (const end of clients.splice(0)) end(false);
});

t.test('load shedder: a stall (one late window), windows with nothing served and refused units do not shrink the share', async (t) => {
  const clock = { ms: 0 };
  const shedder = new LoadShedder(options, lagOf(0), () => clock.ms);
  t.teardown(() => shedder.close());
  const held = shedder.begin()!;
  clock.ms += 400;
  shedder.adjust();
  t.equal(shedder.taking, 1, 'nothing served in the window: no evidence either way');
  held();
  serve(shedder, clock, 10, 300);
  hold(shedder, 5);
  shedder.adjust();
  serve(shedder, clock, 10, 20);
  hold(shedder, 5);
  shedder.adjust();
  serve(shedder, clock, 10, 200);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 1, 'a late window, one on time, a late one: never two in a row');
  serve(shedder, clock, 10, 500, false);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 1, 'units ended as not served (refused further on) count for nothing');
  serve(shedder, clock, 10, 200);
  hold(shedder, 5);
  shedder.adjust();
  t.equal(shedder.taking, 0.75, 'the window with no unit served left the count standing: this late one is the second');
});
