import t from 'tap';
import { leastIdAt, type SearchPosting } from '../../node/store/index.ts';
import { driverOf, matchesOf } from '../../node/search/message-search.ts';

// How a search reads (README, "Search"): which word's postings it steps through, and what a hit's places are.

/** `n` postings, newest first, one a second back from `newestMs`. */
const postings = (n: number, newestMs: number, everyMs = 1_000): SearchPosting[] => Array.from({ length: n }, (_, i) => ({ logId: 'log', messageId: leastIdAt(newestMs - i * everyMs) }));
const T = Date.parse('2026-11-30T12:00:00.000Z');

t.test('the sparsest word drives', async (t) => {
  // Two full steps: the common word's 200 newest span 200 s, the rarer (a prefix's words) 2,000 s.
  t.equal(driverOf([postings(200, T), postings(200, T, 10_000)], 200), 1, 'the step that reaches furthest back, though it is not the first');
  t.equal(driverOf([postings(200, T, 10_000), postings(200, T)], 200), 0, 'whichever its place');
  t.equal(driverOf([postings(200, T), postings(40, T), postings(7, T)], 200), 2, 'a word known whole (a short step) before any full one, the fewest first');
  t.equal(driverOf([postings(200, T), postings(200, T)], 200), 0, 'a tie: the first');
  t.equal(driverOf([postings(3, T)], 200), 0, 'one word');
});

t.test('the places of the words of a hit', async (t) => {
  t.same(matchesOf('Kaloyone and yofesa, yofe', ['kaloyone'], 'yof'), [[0, 8], [13, 19], [21, 25]], 'the exact word and each word the last one begins');
  t.same(matchesOf('yofesa only', ['kaloyone'], 'yof'), [], 'an exact word missing: no hit');
  t.same(matchesOf('kaloyone only', ['kaloyone'], 'yof'), [], 'no word with the prefix: no hit');
});
