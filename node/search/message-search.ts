import { ApiError, isApiError } from '../../common/index.ts';
import { messageView, type MessageView } from '../chat/index.ts';
import { chatOfLog, leastIdAt, tokens, type NodeStore, type SearchPosting, type StoredMessage } from '../store/index.ts';

/** Limits of a search (README, "Search"). */
export const SEARCH_LIMITS = Object.freeze({
  /** Characters of a query. */
  queryChars: 200,
  /** Terms of a query (words and emoji). */
  terms: 8,
  /** Terms the last word of a query stands for, as a prefix. */
  prefixTerms: 20,
  /** Postings of the driving term read per step. */
  step: 200,
  /** Postings one page reads at most before it answers with what it found and a cursor. */
  scan: 2_000,
  /** Chats a user search may name. */
  chatIds: 100,
  /** Hits ranked by relevance: the newest this many hits (in at most `scan` postings). */
  relevanceCandidates: 200,
  /** Hits a page holds: default and most. */
  defaultSize: 20,
  maxSize: 50,
});

/** Who searches: a user (the chats it is in now, but the senders it blocks) or the application's backend (every chat). */
export type Searcher = { appId: string; userId: string } | { appId: string; backend: true };

export interface SearchFilters {
  chatIds?: readonly string[];
  senderId?: string;
  /** Messages sent before / after these times (ISO 8601). */
  before?: string;
  after?: string;
  /** true: replies in threads only; false: messages of chats' timelines only. */
  inThread?: boolean;
  hasAttachments?: boolean;
}

export interface SearchHit {
  chatId: string;
  message: MessageView;
  /** Where the query's words are in `message.content`: [start, end) in UTF-16 units, in order. */
  matches: [number, number][];
}

/** Newest first, or by relevance (see MessageSearch.ranked). */
export type SearchOrder = 'newest' | 'relevance';

export interface SearchPage {
  hits: SearchHit[];
  /** Present when there may be more: pass it as `cursor`. */
  nextCursor?: string;
}

/**
 * Message search (README, "Search"): the words of the query, each found in the index (the last
 * one as a prefix too, as the user types), newest first. One word drives (driverOf): the sparsest
 * among the newest; its postings are read a step at a time (a cursor per word: SearchIndex.cursor),
 * kept when in a chat the searcher may read, and checked against the message as stored (every word there, not deleted
 * or hidden, the filters, not from a user the searcher blocks), which also gives the places of
 * the words to highlight. A page reads at most SEARCH_LIMITS.scan postings: it may then hold
 * fewer than `size` hits, with a cursor to go on from.
 */
export class MessageSearch {
  constructor(private readonly store: NodeStore) {}

  async search(who: Searcher, query: string, filters: SearchFilters, size: number, cursor: string | undefined, order: SearchOrder = 'newest'): Promise<SearchPage | ApiError> {
    if (order === 'newest') return this.newest(who, query, filters, size, cursor);
    const at: { anchor?: string; offset: number } | null = cursor === undefined ? { offset: 0 } : rankCursor(cursor);
    if (at === null) return field('/query/cursor', 'not a cursor this route gave for order=relevance');
    const found = await this.newest(who, query, filters, SEARCH_LIMITS.relevanceCandidates, undefined, at.anchor);
    if (isApiError(found)) return found;
    const ranked = byRelevance(found.hits, [...new Set(tokens(query).map((t) => t.term))]);
    const page = ranked.slice(at.offset, at.offset + size);
    const more = at.offset + size < ranked.length;
    // The candidates are the newest hits before the first page's newest: the same set on every page.
    const first = at.anchor ?? nextAfter(found.hits[0]?.message.messageId);
    return { hits: page, ...(more && first !== undefined ? { nextCursor: rankCursorOf(first, at.offset + size) } : {}) };
  }

  /** Newest first; `beforeId` (exclusive) bounds the ids when given, over `filters.before`. */
  private async newest(who: Searcher, query: string, filters: SearchFilters, size: number, cursor: string | undefined, beforeId?: string): Promise<SearchPage | ApiError> {
    const words = [...new Set(tokens(query).map((t) => t.term))];
    if (words.length === 0) return field('/query/q', 'has no word to search for');
    if (words.length > SEARCH_LIMITS.terms) return field('/query/q', `has more than ${SEARCH_LIMITS.terms} words`);
    const before = beforeId ?? (cursor === undefined ? idAt(filters.before) : cursorId(cursor));
    if (before === null) return field('/query/cursor', 'not a cursor this route gave');
    const after = filters.after === undefined ? undefined : idAt(new Date(Date.parse(filters.after) + 1).toISOString());
    const exact = words.slice(0, -1);
    const last = words.at(-1)!;
    const { appId } = who;
    // Every message acknowledged before this search is in the index by now.
    await this.store.search.settled();
    const [chats, blocked, expansions] = await Promise.all([this.readable(who, filters.chatIds), this.blocked(who), this.store.search.termsWithPrefix(appId, last, SEARCH_LIMITS.prefixTerms)]);
    const lastTerms = [...new Set([last, ...expansions])];
    // The driving group: the sparsest, by its newest step (driverOf).
    const range = { ...(before === undefined ? {} : { before }), ...(after === undefined ? {} : { after }) };
    const cursors = [...exact.map((w) => [w]), lastTerms].map((terms) => this.store.search.cursor(appId, terms, range));
    const firsts = await Promise.all(cursors.map((c) => c.next(SEARCH_LIMITS.step)));
    const driver = driverOf(firsts, SEARCH_LIMITS.step);
    const matches = (m: StoredMessage) => matchesOf(m.content, exact, last);
    const hits: SearchHit[] = [];
    const seen = new Set<string>();
    let window = firsts[driver]!;
    let scanned = 0;
    let lastScanned: string | undefined;
    for (;;) {
      const wanted = window.filter((p) => (chats === undefined || chats.has(chatOfLog(p.logId))) && !seen.has(p.messageId));
      const messages = await this.messagesOf(appId, wanted);
      for (const p of window) {
        scanned++;
        lastScanned = p.messageId;
        if (seen.has(p.messageId)) continue;
        const m = messages.get(`${p.logId}/${p.messageId}`);
        if (!m) continue;
        seen.add(p.messageId);
        const places = matches(m);
        if (places.length === 0 || !shown(m, filters, blocked)) continue;
        hits.push({ chatId: chatOfLog(m.chatId), message: messageView(m, undefined, 'userId' in who ? who.userId : undefined), matches: places });
        if (hits.length >= size) return { hits, nextCursor: cursorOf(p.messageId) };
      }
      if (window.length < SEARCH_LIMITS.step) return { hits };
      if (scanned >= SEARCH_LIMITS.scan) return { hits, nextCursor: cursorOf(lastScanned!) };
      window = await cursors[driver]!.next(SEARCH_LIMITS.step);
    }
  }

  /** The chats a searcher reads: a user's now (of `chatIds`, when given), the backend's `chatIds` or all (undefined). */
  private async readable(who: Searcher, chatIds: readonly string[] | undefined): Promise<Set<string> | undefined> {
    if ('backend' in who) return chatIds === undefined ? undefined : new Set(chatIds);
    const mine = await this.store.chats.chatsOf(who.appId, who.userId);
    return new Set(chatIds === undefined ? mine : mine.filter((id) => chatIds.includes(id)));
  }

  /** The users a user searcher blocks (at most BLOCKS_PER_USER): their messages are left out. */
  private async blocked(who: Searcher): Promise<Set<string>> {
    if ('backend' in who) return new Set();
    const out = new Set<string>();
    for (let after: string | undefined; ; ) {
      const page = await this.store.moderation.blocks(who.appId, who.userId, after, 500);
      for (const b of page) out.add(b.userId);
      if (page.length < 500) return out;
      after = page.at(-1)!.userId;
    }
  }

  /** The messages of these postings as stored, by `logId/messageId`: one read per log (and partition). */
  private async messagesOf(appId: string, postings: SearchPosting[]): Promise<Map<string, StoredMessage>> {
    const byLog = new Map<string, string[]>();
    for (const p of postings) byLog.set(p.logId, [...(byLog.get(p.logId) ?? []), p.messageId]);
    const out = new Map<string, StoredMessage>();
    await Promise.all(
      [...byLog].map(async ([logId, ids]) => {
        for (const m of await this.store.messages.getMany(appId, logId, ids)) if (m) out.set(`${logId}/${m.id}`, m);
      }),
    );
    return out;
  }
}

/**
 * The group of a query's terms whose postings drive a search (read step by step; each found
 * message is then checked for the other words): the sparsest, as its steps cover the most time
 * for the same rows read. A group whose first step came back short is known whole (the fewest
 * first); else the one whose `limit`-th newest posting is the oldest. Ties: the first.
 */
export function driverOf(firsts: readonly (readonly SearchPosting[])[], limit: number): number {
  const rank = (f: readonly SearchPosting[]): [number, number, string] => (f.length < limit ? [0, f.length, ''] : [1, 0, f.at(-1)!.messageId]);
  let best = 0;
  for (let i = 1; i < firsts.length; i++) {
    const [a, b] = [rank(firsts[i]!), rank(firsts[best]!)];
    if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) best = i;
  }
  return best;
}

/** Where the query's words are in `content`: every exact word there, and a word starting with the last; else none. */
export function matchesOf(content: string, exact: readonly string[], last: string): [number, number][] {
  const found = tokens(content);
  const places = found.filter((t) => exact.includes(t.term) || t.term.startsWith(last));
  if (!found.some((t) => t.term.startsWith(last))) return [];
  for (const w of exact) if (!found.some((t) => t.term === w)) return [];
  return places.map((t) => [t.start, t.end]);
}

/** A message a searcher is shown: not deleted, not hidden, not from a user it blocks, within the filters. */
function shown(m: StoredMessage, f: SearchFilters, blocked: Set<string>): boolean {
  if (m.deletedAt !== undefined || m.hiddenAt !== undefined || blocked.has(m.senderId)) return false;
  if (f.senderId !== undefined && m.senderId !== f.senderId) return false;
  if (f.inThread !== undefined && (m.parentId !== undefined) !== f.inThread) return false;
  if (f.hasAttachments !== undefined && (m.attachments !== undefined && m.attachments.length > 0) !== f.hasAttachments) return false;
  return true;
}

/** The least id of a time (ISO 8601): every message sent at or after it has an id at or after this one. */
const idAt = (time: string | undefined): string | undefined => (time === undefined ? undefined : leastIdAt(Date.parse(time)));

/**
 * Hits by relevance, most relevant first (ties: newest first): per query word, how often it is in
 * the message (a word the last one is a prefix of counts half), weighted by how rare the word is
 * among the hits, over the message's length in words; a word found whole beats one found as a
 * prefix, and a shorter message with the same words ranks higher.
 */
function byRelevance(hits: SearchHit[], words: string[]): SearchHit[] {
  const last = words.at(-1)!;
  const exact = words.slice(0, -1);
  const scored = hits.map((hit) => {
    const terms = tokens(hit.message.content).map((t) => t.term);
    const tf = (w: string) => terms.filter((t) => t === w).length + (w === last ? terms.filter((t) => t !== w && t.startsWith(w)).length / 2 : 0);
    return { hit, terms, tf: new Map([...exact, last].map((w) => [w, tf(w)])) };
  });
  const idf = new Map([...exact, last].map((w) => [w, Math.log(1 + hits.length / Math.max(1, scored.filter((s) => s.tf.get(w)! > 0).length))]));
  const score = (s: (typeof scored)[number]) => {
    let sum = 0;
    for (const [w, tf] of s.tf) sum += ((tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * s.terms.length) / 10))) * (idf.get(w) ?? 0);
    return sum;
  };
  return scored
    .map((s) => ({ hit: s.hit, score: score(s) }))
    .sort((a, b) => b.score - a.score || (a.hit.message.messageId < b.hit.message.messageId ? 1 : -1))
    .map((s) => s.hit);
}

/** Just past `id` (the least id greater): the newest candidate is below it. */
function nextAfter(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  const hex = id.replaceAll('-', '');
  const next = (BigInt(`0x${hex}`) + 1n).toString(16).padStart(32, '0');
  return `${next.slice(0, 8)}-${next.slice(8, 12)}-${next.slice(12, 16)}-${next.slice(16, 20)}-${next.slice(20)}`;
}

const rankCursorOf = (anchor: string, offset: number) => Buffer.from(`r:${anchor}:${offset}`).toString('base64url');
function rankCursor(cursor: string): { anchor: string; offset: number } | null {
  const [kind, anchor, offset] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  const n = Number(offset);
  return kind === 'r' && anchor !== undefined && UUID.test(anchor) && Number.isInteger(n) && n > 0 && n < SEARCH_LIMITS.relevanceCandidates ? { anchor, offset: n } : null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const cursorOf = (id: string) => Buffer.from(id).toString('base64url');
function cursorId(cursor: string): string | null {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  return UUID.test(id) ? id : null;
}

const field = (path: string, message: string) => ApiError.field('VALIDATION_FAILED', path, message);
