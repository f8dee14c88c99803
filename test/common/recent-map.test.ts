import t from 'tap';
import { RecentMap, RecentSet } from '../../common/cache/index.ts';

// common/cache/recent.ts: a bounded memory of the keys set lately, dropped by halves.
t.test('RecentMap: never more than max keys, always the newest max / 2, a key set again kept', (t) => {
  const m = new RecentMap<number, string>(10);
  let largest = 0;
  for (let i = 0; i < 1_000; i++) {
    m.set(i, `v${i}`);
    largest = Math.max(largest, m.size);
    for (let back = 0; back < 5 && back <= i; back++) if (m.get(i - back) !== `v${i - back}`) t.fail(`after ${i}: ${i - back} lost`);
  }
  t.ok(largest <= 10, `at most 10 keys held (held ${largest})`);
  t.equal(m.get(0), undefined, 'the oldest are gone');
  t.notOk(m.has(0));

  const kept = new RecentMap<string, number>(10);
  kept.set('hot', 1);
  for (let i = 0; i < 100; i++) {
    kept.set(`cold${i}`, i);
    if (i % 3 === 0) kept.set('hot', kept.get('hot')! + 1);
  }
  t.equal(kept.get('hot'), 35, 'a key set again every few sets stays, with its latest value');
  t.equal(kept.get('cold0'), undefined, 'a key never set again goes');
  t.end();
});

t.test('RecentMap: delete, and entries oldest half first, deletable while iterated', (t) => {
  const m = new RecentMap<string, number>(6);
  for (const [i, k] of ['a', 'b', 'c', 'd', 'e'].entries()) m.set(k, i);
  t.strictSame([...m.entries()].map(([k]) => k), ['a', 'b', 'c', 'd', 'e'], 'set order, the older half first');
  t.equal(m.delete('b'), true, 'a key held is deleted');
  t.equal(m.delete('b'), false, 'once');
  t.equal(m.delete('e'), true, 'from the newer half too');
  for (const [k, v] of m.entries()) if (v % 2 === 0) m.delete(k);
  t.strictSame([...m.entries()], [['d', 3]], 'deleted while iterating');
  t.equal(m.size, 1);
  m.set('d', 9);
  t.strictSame([...m.entries()], [['d', 9]], 'set again: one entry, its new value');
  t.throws(() => new RecentMap(1), RangeError, 'fewer than 2 keys refused');
  t.end();
});

t.test('RecentSet: has, add, delete, bounded', (t) => {
  const s = new RecentSet<string>(4);
  s.add('x').add('y');
  t.ok(s.has('x') && s.has('y'));
  t.equal(s.delete('x'), true);
  t.notOk(s.has('x'));
  for (let i = 0; i < 50; i++) s.add(`k${i}`);
  t.ok(s.size <= 4, 'at most 4');
  t.ok(s.has('k49') && s.has('k48'), 'the newest two kept');
  t.end();
});
