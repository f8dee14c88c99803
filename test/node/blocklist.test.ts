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

t.test('a 4,000-character message of repeated near-matches against 10,000 entries is checked in under 1 ms of CPU', async (t) => {
  const entries = Array.from({ length: 9_990 }, (_, i) => ({ text: `w${i.toString(36)}x${i % 7 ? 'abc' : 'zz'}`, action: i % 2 ? ('mask' as const) : ('block' as const) }));
  // Near-matches: long prefixes that never complete (the input backtracking matchers choke on).
  for (let n = 10; n < 20; n++) entries.push({ text: `${'a'.repeat(n)}b`, action: 'block' });
  const list = new Blocklist(entries);
  const texts = ['a'.repeat(4000), `${'a'.repeat(19)} `.repeat(200), 'w1xab '.repeat(667).slice(0, 4000)];
  for (const text of texts) {
    t.equal(text.length, 4000);
    t.equal(list.check(text), undefined, 'no match');
    for (let i = 0; i < 20; i++) list.check(text);
    const runs: number[] = [];
    for (let i = 0; i < 21; i++) {
      const before = process.cpuUsage();
      list.check(text);
      const used = process.cpuUsage(before);
      runs.push((used.user + used.system) / 1000);
    }
    const median = runs.sort((a, b) => a - b)[10]!;
    t.ok(median < 1, `${JSON.stringify(text.slice(0, 12))}…: ${median.toFixed(3)} ms of CPU (median of 21)`);
  }
});
