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
  const out: Token[] = [];
  for (const s of words.segment(text)) {
    if (!s.isWordLike && !EMOJI.test(s.segment)) continue;
    const term = fold(s.segment);
    if (term.length === 0 || term.length > SEARCH_TERM_CHARS) continue;
    out.push({ term, start: s.index, end: s.index + s.segment.length });
  }
  return out;
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
