import t from 'tap';
import { Blocklist, fold } from '../../node/moderation/index.ts';

// The blocklist matcher (node/moderation/blocklist.ts): folded, whole-word, linear-time matching.
t.test('entries match case, compatibility forms, diacritics and whitespace runs alike, as whole words only', async (t) => {
  const list = new Blocklist([
    { text: 'Spam', action: 'block' },
    { text: 'darn it', action: 'mask' },
    { text: 'ass', action: 'mask' },
  ]);
  t.same(list.check('buy SPAM now'), { action: 'block' }, 'case');
  t.same(list.check('buy ｓｐａｍ now'), { action: 'block' }, 'fullwidth compatibility forms');
  t.same(list.check('buy spâm now'), { action: 'block' }, 'diacritics');
  t.same(list.check('buy spa\u0301m now'), { action: 'block' }, 'a combining mark');
  t.equal(list.check('spammer'), undefined, 'not inside a longer word');
  t.equal(list.check('a class act'), undefined, 'no Scunthorpe problem');
  t.same(list.check('oh DÄRN  it? no: darn it!'), { action: 'mask', text: 'oh ********? no: *******!' }, 'a phrase (a run of whitespace is one space), masked one star per character of the original');
  t.same(list.check('darnit'), undefined, 'but the space is needed');
  t.same(list.check('Dârn it, ass.'), { action: 'mask', text: '*******, ***.' }, 'each match masked, the rest kept');
  t.same(list.check('darn it, spam'), { action: 'block' }, 'a block entry anywhere refuses the whole text');
  t.equal(list.check('nothing here 🙂'), undefined);
});

t.test('the same folded text listed twice: block wins; an entry with nothing left after folding matches nothing', async (t) => {
  const list = new Blocklist([
    { text: 'Heck', action: 'mask' },
    { text: 'HÉCK', action: 'block' },
    { text: '\u0301', action: 'block' },
  ]);
  t.equal(list.size, 1);
  t.same(list.check('heck'), { action: 'block' });
  t.same(fold('Ǆe\u0301').folded, 'dze', 'folding maps a code point to what it stands for (Ǆ is D, Ž)');
});

/** Median CPU milliseconds of one check of `text`, over 15 samples of 5 checks each, after a warmup. */
function checkCost(list: Blocklist, text: string): number {
  for (let i = 0; i < 10; i++) list.check(text);
  const samples: number[] = [];
  for (let i = 0; i < 15; i++) {
    const before = process.cpuUsage();
    for (let k = 0; k < 5; k++) list.check(text);
    const used = process.cpuUsage(before);
    samples.push((used.user + used.system) / 5000);
  }
  return samples.sort((a, b) => a - b)[7]!;
}

// Not a speed check (benchmarks measure speed): the shape of the cost, as ratios of two runs made
// side by side, so a busy machine slows both. A matcher that tried each entry at each position
// would cost about a hundred times more with 10,000 entries than with 100; a backtracking one would
// grow faster than the text.
t.test('the cost of a check does not grow with the number of entries, and grows linearly with the text, also on near-matches', async (t) => {
  const entriesOf = (count: number) => {
    const entries = Array.from({ length: count - 10 }, (_, i) => ({ text: `w${i.toString(36)}x${i % 7 ? 'abc' : 'zz'}`, action: i % 2 ? ('mask' as const) : ('block' as const) }));
    // Near-matches: long prefixes that never complete (the input backtracking matchers choke on).
    for (let n = 10; n < 20; n++) entries.push({ text: `${'a'.repeat(n)}b`, action: 'block' });
    return entries;
  };
  const [small, large] = [new Blocklist(entriesOf(100)), new Blocklist(entriesOf(10_000))];
  const texts = { 'a run of one letter': (n: number) => 'a'.repeat(n), 'near-matches of the long entries': (n: number) => `${'a'.repeat(19)} `.repeat(n / 20), 'near-matches of many entries': (n: number) => 'w1xab '.repeat(Math.ceil(n / 6)).slice(0, n) };
  for (const [name, make] of Object.entries(texts)) {
    const [text, longer] = [make(4000), make(40_000)];
    t.equal(large.check(text), undefined, `${name}: no match`);
    const [fewEntries, manyEntries, tenTimesLonger] = [checkCost(small, text), checkCost(large, text), checkCost(large, longer)];
    t.ok(manyEntries < 4 * fewEntries, `${name}, 4,000 characters: ${manyEntries.toFixed(3)} ms of CPU with 10,000 entries, ${fewEntries.toFixed(3)} with 100`);
    t.ok(tenTimesLonger < 25 * manyEntries, `${name}: ${tenTimesLonger.toFixed(3)} ms for ten times the text (${(tenTimesLonger / manyEntries).toFixed(1)}×)`);
  }
});
