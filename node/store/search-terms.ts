/**
 * The words of a text as search knows them (README, "Search"), the same on every store: ICU word
 * boundaries (`Intl.Segmenter`, which splits Chinese and Japanese without spaces by dictionary),
 * each word folded (compatibility decomposition, marks removed, lower case), plus emoji, which
 * word segmentation does not count as words. Linear in the text; a text of a message (at most
 * 4,000 characters) gives at most that many terms, and a term is at most SEARCH_TERM_CHARS long
 * (a longer run of letters is no word anyone searches for, and is left out).
 */

import type { StoredMessage } from './types.ts';

/** Longest term kept, in UTF-16 units of its folded form. */
export const SEARCH_TERM_CHARS = 64;

const words = new Intl.Segmenter('und', { granularity: 'word' });
const EMOJI = /\p{Extended_Pictographic}/u;
/**
 * Accents: the combining diacritics (Latin, Greek, Cyrillic…), and emoji variation selectors.
 * Not every mark: a kana's voicing mark makes another syllable (て, で), so it stays.
 */
const ACCENTS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\ufe0e\ufe0f]+/g;

/** A word of a text: its folded form, and where it is in the text (UTF-16 offsets, end exclusive). */
export interface Token {
  term: string;
  start: number;
  end: number;
}

/** Case- and accent-folded: `Crème` and `CREME` are `creme`; `ｶ` is `カ`; `で` stays `で`. */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(ACCENTS, '').normalize('NFC').toLowerCase();
}

/** The words and emoji of `text`, in order, with their places. */
export function tokens(text: string): Token[] {
  if (ASCII.test(text)) return asciiTokens(text);
  return segmentedTokens(text);
}

/** `tokens` by Intl.Segmenter: any text. */
export function segmentedTokens(text: string): Token[] {
  const out: Token[] = [];
  for (const s of words.segment(text)) {
    if (!s.isWordLike && !EMOJI.test(s.segment)) continue;
    const term = fold(s.segment);
    if (term.length === 0 || term.length > SEARCH_TERM_CHARS) continue;
    out.push({ term, start: s.index, end: s.index + s.segment.length });
  }
  return out;
}

const ASCII = /^[\x00-\x7f]*$/;
const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number) => c >= 48 && c <= 57;
/** Letters, digits and `_` (which joins them): what a word of ASCII text is made of. */
const isWordChar = (c: number) => isLetter(c) || isDigit(c) || c === 95;

/**
 * `tokens` of ASCII text, as the segmenter cuts it (UAX #29 as ICU applies it, checked against
 * Intl.Segmenter by test/node/search-terms.test.ts) at a tenth of its cost: runs of letters,
 * digits and `_`, joined across one `:` `.` `'` between two letters and one `,` `;` `.` `'` between
 * two digits.
 */
function asciiTokens(text: string): Token[] {
  const out: Token[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isWordChar(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i++;
    for (;;) {
      if (i < n && isWordChar(text.charCodeAt(i))) i++;
      else if (i + 1 < n && joins(text.charCodeAt(i - 1), text.charCodeAt(i), text.charCodeAt(i + 1))) i += 2;
      else break;
    }
    // A lone `_` is no word (ICU gives it no word status); `__` is.
    if (i - start === 1 && text.charCodeAt(start) === 95) continue;
    if (i - start <= SEARCH_TERM_CHARS) out.push({ term: text.slice(start, i).toLowerCase(), start, end: i });
  }
  return out;
}

/** Whether `mid` joins the word chars `before` and `after` into one word. */
function joins(before: number, mid: number, after: number): boolean {
  if (isLetter(before) && isLetter(after)) return mid === 58 || mid === 46 || mid === 39;
  if (isDigit(before) && isDigit(after)) return mid === 44 || mid === 59 || mid === 46 || mid === 39;
  return false;
}

/** The distinct terms of `text`: what a message is indexed under. */
export function termsOf(text: string): string[] {
  return [...new Set(tokens(text).map((t) => t.term))];
}

/**
 * Whether a put of `m` indexes its text (SearchIndex): a message not deleted, with text, new or
 * with text other than `previous` had (a change of its reactions or of its thread's summary
 * indexes nothing). A hidden message's text is indexed too: readers leave it out while hidden.
 */
export const indexed = (m: StoredMessage, previous: StoredMessage | undefined): boolean => m.deletedAt === undefined && m.content !== '' && previous?.content !== m.content;

/** The hour a message id was made in (ms since the epoch / 3,600,000): the Cassandra index's bucket. */
export const SEARCH_HOUR_MS = 3_600_000;
