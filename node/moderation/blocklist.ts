import { AhoCorasick } from '@monyone/aho-corasick';
import type { BlocklistEntry } from '../../common/moderation/index.ts';

/** Code points folded outside ASCII, remembered (text repeats its characters); bounded. */
const folds = new Map<number, string>();
const MARK = /\p{M}/gu;
const WORD = /[\p{L}\p{N}]/u;
const SPACE = /^\s$/u;

function foldCodePoint(cp: number): string {
  let f = folds.get(cp);
  if (f === undefined) {
    // Compatibility forms and case to their base form, then diacritics (combining marks) dropped.
    f = String.fromCodePoint(cp).normalize('NFKD').toLowerCase().normalize('NFKD').replace(MARK, '');
    if (folds.size >= 50_000) folds.clear();
    folds.set(cp, f);
  }
  return f;
}

/**
 * `text` folded for matching (Unicode compatibility forms, case, diacritics and runs of whitespace), with where each
 * folded UTF-16 unit came from in `text` (the start and end of its code point). One pass, linear in
 * the text's length; ASCII needs no lookup.
 */
export function fold(text: string, map = true): { folded: string; from: number[]; to: number[] } {
  let folded = '';
  // Without `map` the offsets are not kept: a text that matches nothing needs none.
  const from: number[] = [];
  const to: number[] = [];
  // Whether `folded` ends with a space; kept here because asking the string (endsWith) flattens
  // the concatenation built so far, which made the fold quadratic in the number of spaces.
  let afterSpace = false;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    const cp = c < 0x80 ? c : text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    // A run of whitespace is one space (its last unit reaching to the run's end).
    if (c === 32 || c === 9 || c === 10 || c === 13 || (c >= 0x80 && SPACE.test(String.fromCodePoint(cp)))) {
      if (afterSpace) {
        if (map) to[to.length - 1] = i + width;
      } else {
        folded += ' ';
        afterSpace = true;
        if (map) from.push(i), to.push(i + width);
      }
      i += width;
      continue;
    }
    if (c < 0x80) {
      afterSpace = false;
      folded += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : text[i];
      if (map) from.push(i), to.push(i + 1);
      i++;
      continue;
    }
    const f = foldCodePoint(cp);
    if (map) for (let k = 0; k < f.length; k++) from.push(i), to.push(i + width);
    folded += f;
    // A code point folded to nothing (a combining mark) leaves the text as it was; some fold to a
    // space and more (U+00A8 to " " once its mark is dropped).
    if (f.length > 0) afterSpace = f.endsWith(' ');
    i += width;
  }
  return { folded, from, to };
}

/** What a blocklist makes of a text: refused, masked (the new text), or nothing. */
export type BlocklistVerdict = { action: 'block' } | { action: 'mask'; text: string } | undefined;

/**
 * An application's blocklist compiled into one Aho–Corasick automaton (@monyone/aho-corasick) over
 * folded entries. `check` is linear in the text's length (plus the matches found, at most one per
 * position and entry length): fold, one scan, then the whole-word matches kept leftmost-longest.
 * An entry matches whole words only: not inside a longer word ("ass" is not in "class").
 */
export class Blocklist {
  private readonly matcher: AhoCorasick;
  private readonly actions = new Map<string, BlocklistEntry['action']>();

  constructor(entries: readonly BlocklistEntry[]) {
    for (const e of entries) {
      const key = fold(e.text).folded;
      if (key.length === 0) continue;
      // The same folded text listed twice: blocking wins.
      if (this.actions.get(key) !== 'block') this.actions.set(key, e.action);
    }
    this.matcher = new AhoCorasick([...this.actions.keys()]);
  }

  get size(): number {
    return this.actions.size;
  }

  check(text: string): BlocklistVerdict {
    if (this.actions.size === 0) return undefined;
    const { folded } = fold(text, false);
    const hits = this.matcher.matchInText(folded);
    if (hits.length === 0) return undefined;
    const { from, to } = fold(text);
    const whole = (begin: number, end: number) => (begin === 0 || !WORD.test(folded[begin - 1]!)) && (end === folded.length || !WORD.test(folded[end]!));
    // Leftmost, then longest; overlapping ones after a kept match are skipped.
    const kept: { begin: number; end: number }[] = [];
    let blocked = false;
    for (const h of hits.filter((h) => whole(h.begin, h.end)).sort((a, b) => a.begin - b.begin || b.end - a.end)) {
      if (kept.length > 0 && h.begin < kept.at(-1)!.end) continue;
      if (this.actions.get(h.keyword) === 'block') blocked = true;
      kept.push(h);
    }
    if (blocked) return { action: 'block' };
    if (kept.length === 0) return undefined;
    let out = '';
    let at = 0;
    for (const k of kept) {
      const start = from[k.begin]!;
      const end = to[k.end - 1]!;
      out += text.slice(at, start) + '*'.repeat(Array.from(text.slice(start, end)).length);
      at = end;
    }
    return { action: 'mask', text: out + text.slice(at) };
  }
}
