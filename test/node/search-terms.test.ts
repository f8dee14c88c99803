import t from 'tap';
import { fold, termsOf, tokens } from '../../node/store/index.ts';
import { segmentedTokens } from '../../node/store/search-terms.ts';

// The words search knows (README, "Search"): the same on every store, for a query as for a message.

t.test('words in any script, folded, with their places', async (t) => {
  t.same(termsOf('我们明天开会'), ['我们', '明天', '开会'], 'Chinese without spaces, by dictionary');
  t.same(termsOf('東京で会議をします'), ['東京', 'で', '会議', 'を', 'し', 'ます'], 'Japanese; a kana’s voicing mark stays (で is not て)');
  t.same(termsOf('Crème brûlée, CAFÉ! Ёлка Ñandú'), ['creme', 'brulee', 'cafe', 'елка', 'nandu'], 'case and accents folded');
  t.same(termsOf('ｶﾀｶﾅ Ｆｕｌｌ'), ['カタカナ', 'full'], 'compatibility forms folded');
  t.same(termsOf('party 🎉 ❤️ ❤'), ['party', '🎉', '❤'], 'emoji are words; a variation selector is folded away');
  t.same(termsOf(`${'x'.repeat(65)} ok`), ['ok'], 'a word longer than 64 characters is no word');
  t.same(tokens('Say "don\'t", e.g. 3.14 or 1,000'), [
    { term: 'say', start: 0, end: 3 },
    { term: "don't", start: 5, end: 10 },
    { term: 'e.g', start: 13, end: 16 },
    { term: '3.14', start: 18, end: 22 },
    { term: 'or', start: 23, end: 25 },
    { term: '1,000', start: 26, end: 31 },
  ], 'ASCII words as UAX #29 joins them, with their places');
  t.equal(fold('ÅNGSTRÖM'), 'angstrom');
});

t.test('ASCII text is cut exactly as Intl.Segmenter cuts it (the fast path checked against it)', async (t) => {
  // A fixed pseudo-random sequence: the same 50,000 strings on every run.
  let seed = 42;
  const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const alphabet = "abAB019_.,;:'- !?\"()/\t@#";
  const mismatches: string[] = [];
  for (let k = 0; k < 50_000; k++) {
    let s = '';
    const length = 1 + Math.floor(next() * 20);
    for (let i = 0; i < length; i++) s += alphabet[Math.floor(next() * alphabet.length)];
    if (JSON.stringify(tokens(s)) !== JSON.stringify(segmentedTokens(s))) mismatches.push(s);
  }
  t.same(mismatches.slice(0, 5), [], 'no string is cut differently');
});
