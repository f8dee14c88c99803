/**
 * The search benchmark's text: made-up words from syllables (so no word is any language's, and
 * every one is one ASCII token), drawn with Zipf-like frequencies (the n-th word about 1/n as
 * often as the first), 5–12 to a message, and RARE in one text of TEXTS. Deterministic.
 */

/** The rare word: in one text of TEXTS (about one message of 10,000). */
export const RARE = 'zephyrine';
const TEXTS = 10_007;
const WORDS = 5_000;

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    // mulberry32
    s = (s + 0x6d2b79f5) >>> 0;
    let x = s;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function build(): { vocabulary: string[]; texts: string[] } {
  const next = random(43);
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'be', 'da', 'go', 'hu', 'pe', 'ri', 'so', 'tu', 'wa', 'yo', 'fe', 'li'];
  const seen = new Set<string>([RARE]);
  const vocabulary: string[] = [];
  while (vocabulary.length < WORDS) {
    const n = 2 + Math.floor(next() * 3);
    const word = Array.from({ length: n }, () => syllables[Math.floor(next() * syllables.length)]).join('');
    if (!seen.has(word)) {
      seen.add(word);
      vocabulary.push(word);
    }
  }
  // Cumulative weights 1/n: a word drawn by binary search.
  const cumulative: number[] = [];
  vocabulary.forEach((_, i) => cumulative.push((cumulative[i - 1] ?? 0) + 1 / (i + 1)));
  const total = cumulative.at(-1)!;
  const draw = () => {
    const x = next() * total;
    let [lo, hi] = [0, cumulative.length - 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return vocabulary[lo]!;
  };
  const texts = Array.from({ length: TEXTS }, (_, i) => {
    const words = Array.from({ length: 5 + Math.floor(next() * 8) }, draw);
    if (i === 0) words.splice(2, 0, RARE);
    return words.join(' ');
  });
  return { vocabulary, texts };
}

export const corpus = build();
