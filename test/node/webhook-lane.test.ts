import t from 'tap';
import { EventIds, type DeliveryResult } from '../../common/webhooks/index.ts';
import { Lane, type Task } from '../../node/webhooks/lane.ts';
import type { HookEndpoint } from '../../node/webhooks/source.ts';

// The delivery lane of one endpoint (node/webhooks/lane.ts), driven with a fake receiver and clock.
const endpoint: HookEndpoint = { id: 'ep', appId: 'app', url: 'https://hooks.example.com/', events: ['message.new'], status: 'ACTIVE', secret: 'whsec_x', createdAt: '', updatedAt: '' };
const ids = new EventIds();

function harness(answer: () => DeliveryResult | Promise<DeliveryResult>, now: () => number = Date.now) {
  const outcomes: string[] = [];
  const attempts: { attempt: number; next: number | undefined }[] = [];
  const disabled: string[] = [];
  let inFlight = 0;
  let most = 0;
  let cancels = 0;
  const lane = new Lane(
    endpoint.id,
    {
      current: () => endpoint,
      attempted: (_task, _result, attempt, next) => attempts.push({ attempt, next }),
      disable: (_e, reason) => disabled.push(reason),
      allowInsecure: false,
      send: (_req, done) => {
        most = Math.max(most, ++inFlight);
        void Promise.resolve(answer()).then((result) => {
          inFlight--;
          done(result);
        });
      },
      cancel: () => cancels++,
      now,
    },
    3,
  );
  const task = (madeAt = Date.now()): Task => ({ event: { id: new EventIds().next(madeAt), appId: 'app', type: 'message.new', body: '{}' }, failures: 0, live: () => true, settle: (o) => outcomes.push(o) });
  return { lane, task, outcomes, attempts, disabled, most: () => most, cancels: () => cancels };
}
const ok: DeliveryResult = { ok: true, statusCode: 200, durationMs: 1 };
const tick = () => new Promise((resolve) => setImmediate(resolve));

t.test('at most `concurrency` requests in flight; the rest wait their turn', async (t) => {
  const gates: (() => void)[] = [];
  const h = harness(() => new Promise<DeliveryResult>((resolve) => gates.push(() => resolve(ok))));
  for (let i = 0; i < 10; i++) h.lane.push(h.task());
  await tick();
  t.equal(gates.length, 3, 'three sent, seven waiting');
  while (h.outcomes.length < 10) {
    gates.shift()?.();
    await tick();
  }
  t.equal(h.most(), 3, 'never more than three at once');
  t.same(h.outcomes, Array(10).fill('delivered'));
  t.ok(h.lane.idle);
});

t.test('an event 24 hours old that fails is given up, not retried', async (t) => {
  const h = harness(() => ({ ok: false, statusCode: 503, error: 'HTTP 503', durationMs: 1 }));
  h.lane.push(h.task(Date.now() - 24 * 3600_000 + 500));
  await tick();
  await tick();
  t.same(h.outcomes, ['given-up']);
  t.same(h.attempts, [{ attempt: 1, next: undefined }], 'logged with no next retry');
  t.ok(h.lane.idle, 'no retry waiting');
});

t.test('an endpoint with no delivery for 24 hours is disabled, and what waited for it is dropped', async (t) => {
  let clock = Date.now();
  const h = harness(() => ({ ok: false, error: 'ECONNREFUSED', durationMs: 1 }), () => clock);
  h.lane.push(h.task());
  await tick();
  await tick();
  t.same(h.disabled, [], 'one failure: not yet');
  t.equal(h.attempts[0]!.attempt, 1);
  t.ok(h.attempts[0]!.next! - clock >= 800 && h.attempts[0]!.next! - clock <= 1200, 'the retry is due about a second later');
  // A day later (by the lane's clock) another event fails too: the endpoint has failed for 24 h.
  clock += 24 * 3600_000;
  h.lane.push(h.task(clock));
  await tick();
  await tick();
  t.same(h.disabled, ['no delivery succeeded for 24 hours']);
  t.same(h.outcomes.sort(), ['dropped', 'dropped'], 'both events dropped (the retry waiting and the new one)');
  t.ok(h.lane.closed && h.lane.idle);
  h.lane.push(h.task());
  t.equal(h.outcomes.length, 3, 'a closed lane drops at once');
});

t.test('410 Gone disables the endpoint at once', async (t) => {
  const h = harness(() => ({ ok: false, statusCode: 410, error: 'HTTP 410', durationMs: 1 }));
  h.lane.push(h.task());
  h.lane.push(h.task());
  await tick();
  await tick();
  t.same(h.disabled, ['the receiver answered 410 Gone']);
  t.same(h.outcomes, ['dropped', 'dropped']);
  t.equal(h.cancels(), 1, 'the delivery thread is told to drop what it holds of the lane, once');
  t.same(h.attempts, [{ attempt: 1, next: undefined }], 'the request that got 410 is logged; the one dropped after it is not');
});

t.test('an endpoint deleted, disabled or unsubscribed meanwhile gets nothing more', async (t) => {
  let sent = 0;
  const lane = new Lane('ep', { current: () => ({ ...endpoint, events: ['chat.created'] }), attempted: () => {}, disable: () => {}, allowInsecure: false, send: (_req, done) => (sent++, done(ok)), cancel: () => {}, now: Date.now }, 2);
  const outcomes: string[] = [];
  lane.push({ event: { id: ids.next(), appId: 'app', type: 'message.new', body: '{}' }, failures: 0, live: () => true, settle: (o) => outcomes.push(o) });
  await tick();
  t.equal(sent, 0);
  t.same(outcomes, ['dropped']);
});

t.test('an endpoint deleted or disabled meanwhile closes its lane: what waits is dropped, and the delivery thread drops what it holds', async (t) => {
  let current: HookEndpoint | undefined = endpoint;
  let cancels = 0;
  const gates: (() => void)[] = [];
  const outcomes: string[] = [];
  const lane = new Lane('ep', { current: () => current, attempted: () => {}, disable: () => {}, allowInsecure: false, send: (_req, done) => void gates.push(() => done(ok)), cancel: () => cancels++, now: Date.now }, 2);
  const push = () => lane.push({ event: { id: ids.next(), appId: 'app', type: 'message.new', body: '{}' }, failures: 0, live: () => true, settle: (o) => outcomes.push(o) });
  for (let i = 0; i < 5; i++) push();
  await tick();
  t.equal(gates.length, 2, 'two handed over');
  current = undefined;
  gates.shift()!();
  await tick();
  await tick();
  t.ok(lane.closed, 'the next attempt finds the endpoint gone: the lane closes');
  t.equal(cancels, 1, 'and tells the delivery thread');
  t.same(outcomes.sort(), ['delivered', 'dropped', 'dropped', 'dropped'], 'one delivered before, the waiting ones dropped');
});

t.test('thousands waiting, all ended at once when the endpoint unsubscribes: each ends, none recursing into the next', async (t) => {
  let current: HookEndpoint = endpoint;
  const gates: (() => void)[] = [];
  const outcomes: string[] = [];
  const lane = new Lane('ep', { current: () => current, attempted: () => {}, disable: () => {}, allowInsecure: false, send: (_req, done) => void gates.push(() => done(ok)), cancel: () => {}, now: Date.now }, 2);
  const waiting = 200_000;
  for (let i = 0; i < waiting + 2; i++) lane.push({ event: { id: `evt_${i}`, appId: 'app', type: 'message.new', body: '{}' }, failures: 0, live: () => true, settle: (o) => outcomes.push(o) });
  t.equal(gates.length, 2, 'two handed over');
  current = { ...endpoint, events: ['chat.created'] };
  // One answer frees a place: every waiting task is now tried, and dropped (not subscribed) at once.
  t.doesNotThrow(() => gates.shift()!());
  t.equal(outcomes.length, waiting + 1, 'every waiting one dropped, the answered one delivered');
  t.equal(outcomes.filter((o) => o === 'dropped').length, waiting);
  gates.shift()!();
  t.ok(lane.idle);
});

t.test('an endpoint that cannot be read (a rejected read, or one that throws) leaves its task waiting, to be tried again', async (t) => {
  let reads = 0;
  const outcomes: string[] = [];
  const lane = new Lane(
    'ep',
    {
      current: () => {
        reads++;
        if (reads === 1) return Promise.reject(new Error('control store away'));
        if (reads === 2) throw new Error('control store away, at once');
        return endpoint;
      },
      attempted: () => {},
      disable: () => {},
      allowInsecure: false,
      send: (_req, done) => done(ok),
      cancel: () => {},
      now: Date.now,
    },
    1,
    50,
  );
  lane.push({ event: { id: ids.next(), appId: 'app', type: 'message.new', body: '{}' }, failures: 0, live: () => true, settle: (o) => outcomes.push(o) });
  await tick();
  t.same(outcomes, [], 'not settled: it waits');
  t.notOk(lane.idle, 'its retry is pending');
  const until = Date.now() + 5_000;
  while (outcomes.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(outcomes, ['delivered'], 'tried again until the endpoint reads, then delivered');
  t.equal(reads, 3);
  t.ok(lane.idle, 'its place in the lane is free again (one at a time, and it went through)');
});
