import t from 'tap';
import { PushLanes, type LanePush } from '../../node/push/push-lanes.ts';

/**
 * The collapse of a busy chat's pushes (node/push/push-lanes.ts): one in flight per lane, the
 * newest waiting, older ones marked superseded by the push that stands for them, starts a set
 * interval apart, an older push never made after a newer one, a retry replaced by what waits.
 */
interface P extends LanePush {
  name: string;
}

const push = (name: string, sentAtMs: number, lane = 'device chat'): P => ({ name, lane, sentAtMs, eventId: `e-${String(sentAtMs).padStart(6, '0')}` });

function lanes(intervalMs = 0) {
  const started: string[] = [];
  const superseded: string[] = [];
  const l = new PushLanes<P>({ start: (p) => started.push(p.name), superseded: (p, by) => superseded.push(`${p.name}>${by.name}`) }, intervalMs);
  return { l, started, superseded };
}

t.test('a free lane starts a push at once; while it is in flight the newest waits and replaces older waiting ones', async (t) => {
  const { l, started, superseded } = lanes();
  const [a, b, c, d] = [push('a', 1), push('b', 2), push('c', 3), push('d', 4)];
  l.offer(a);
  t.same(started, ['a']);
  l.offer(b);
  l.offer(c);
  l.offer(d);
  t.same(started, ['a'], 'one in flight per lane');
  t.same(superseded, ['b>c', 'c>d'], 'each waiting push replaced by the newer one');
  l.over(a);
  t.same(started, ['a', 'd'], 'the newest starts when the one before ends');
  l.over(d);
  t.equal(l.size, 0, 'an idle lane is forgotten');
});

t.test('lanes are independent', async (t) => {
  const { l, started } = lanes();
  l.offer(push('a', 1, 'one'));
  l.offer(push('b', 2, 'two'));
  t.same(started, ['a', 'b']);
});

t.test('a push older than the newest of its lane is never made after it', async (t) => {
  const { l, started, superseded } = lanes();
  const [a, b] = [push('a', 5), push('b', 7)];
  l.offer(a);
  l.offer(b);
  l.offer(push('late', 6));
  t.same(superseded, ['late>b'], 'older than the waiting one');
  l.over(a);
  l.offer(push('later', 4));
  t.same(superseded, ['late>b', 'later>b'], 'older than the one in flight');
  t.same(started, ['a', 'b']);
  const tie = { ...push('tie', 7), eventId: 'e-000007' };
  l.offer(tie);
  t.same(superseded.at(-1), 'tie>b', 'the same millisecond and event: not newer');
});

t.test('before a retry, a newer waiting push takes the place of the one that failed', async (t) => {
  const { l, started, superseded } = lanes();
  const [a, b] = [push('a', 1), push('b', 2)];
  l.offer(a);
  t.notOk(l.replaced(a), 'nothing waits: the retry goes ahead');
  l.offer(b);
  t.ok(l.replaced(a), 'a newer one waits: it goes instead');
  t.same(superseded, ['a>b']);
  t.same(started, ['a', 'b']);
  t.notOk(l.replaced(a), 'a push no longer current is not replaced again');
});

t.test('starts are at least the interval apart; the newest of those that waited goes when it is up', async (t) => {
  const { l, started } = lanes(300);
  const a = push('a', 1);
  const t0 = Date.now();
  l.offer(a);
  l.over(a);
  l.offer(push('b', 2));
  l.offer(push('c', 3));
  t.same(started, ['a'], 'the interval is not up: it waits');
  while (started.length < 2 && Date.now() - t0 < 2_000) await new Promise((r) => setTimeout(r, 10));
  t.same(started, ['a', 'c']);
  t.ok(Date.now() - t0 >= 290, `started ${Date.now() - t0} ms after the first`);
  l.clear();
  t.equal(l.size, 0);
});
