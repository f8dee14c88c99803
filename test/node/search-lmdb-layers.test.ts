import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { LmdbNodeStore, type StoredMessage } from '../../node/store/index.ts';

// The embedded index holds what it indexed in memory until it writes it to LMDB (search.ts): a
// reader merges the two, and what was written before a close is read back after it.
t.test('lmdb search: postings in memory, being written and written are read as one, across writes and a reopen', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'search-layers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const appId = randomUUID();
  const chats = [randomUUID(), randomUUID()];
  const start = Date.parse('2026-11-30T08:00:00.000Z');
  const all: StoredMessage[] = [];
  const make = (i: number, content: string): StoredMessage => {
    const at = start + i * 300;
    return { appId, chatId: chats[i % 2]!, id: uuidv7({ msecs: at }), seq: i + 1, senderId: 'ann', content, createdAt: new Date(at).toISOString(), reactions: [] };
  };
  // Writes every 40 postings: many writes while messages are put and searched.
  let store = LmdbNodeStore.open(dir, undefined, { searchWritePostings: 40 });
  const newest = () => [...all].sort((a, b) => (a.id < b.id ? 1 : -1)).map((m) => m.id);
  const paged = async (term: string, size: number) => {
    const out: string[] = [];
    for (let before: string | undefined; ; ) {
      const page = await store.search.postings(appId, term, before === undefined ? {} : { before }, size);
      out.push(...page.map((p) => p.messageId));
      if (page.length < size) return out;
      before = page.at(-1)!.messageId;
    }
  };
  // Even messages first, in batches, searching between them (reads while writes are under way).
  for (let i = 0; i < 200; i += 20) {
    const batch = Array.from({ length: 10 }, (_, k) => make(i + 2 * k, `harbor ${i % 40 === 0 ? 'lantern' : 'quay'} word${i + 2 * k}`));
    all.push(...batch);
    await store.messages.put(batch);
    await store.search.settled();
    t.same(await paged('harbor', 7), newest(), `after ${all.length} messages: each once, newest first`);
  }
  await store.close();
  store = LmdbNodeStore.open(dir, undefined, { searchWritePostings: 1_000_000 });
  t.teardown(() => store.close());
  t.same(await paged('harbor', 9), newest(), 'after a reopen: read back from LMDB');
  // Odd messages now: older than most written ones, held in memory (no write before 1,000,000).
  const late = Array.from({ length: 100 }, (_, k) => make(2 * k + 1, `harbor late word${2 * k + 1}`));
  all.push(...late);
  await store.messages.put(late);
  await store.search.settled();
  t.same(await paged('harbor', 11), newest(), 'memory and LMDB merged: each once, newest first');
  t.same(await paged('late', 8), late.map((m) => m.id).reverse(), 'a word only in memory');
  t.same(await paged('lantern', 3), all.filter((m) => m.content.includes('lantern')).map((m) => m.id).reverse(), 'a word only in LMDB');
  t.same(await store.search.termsWithPrefix(appId, 'la', 10), ['lantern', 'late'], 'prefixes from both, in order');
  t.same(await store.search.termsWithPrefix(appId, 'word1', 3), ['word1', 'word10', 'word100'], 'at most limit, in order');
});

// A block is cut to the range by a binary search on its ids, and a message indexed twice (a
// reindex) has a posting in two blocks: every window, whatever blocks its ends fall in, holds each
// message of the range once, newest first.
t.test('lmdb search: ranges cut inside blocks, with every message indexed twice, read each message once', async (t) => {
  const { dir, appId, chatId } = scratch(t);
  // 100 ms apart: a block (BLOCK_SPAN_MS of ids) holds about twenty of them.
  const all = messagesOf(appId, chatId, 120, 100, (i) => `harbor word${i}`);
  let store = LmdbNodeStore.open(dir, undefined, { searchWritePostings: 50 });
  for (let i = 0; i < all.length; i += 12) await store.messages.put(all.slice(i, i + 12));
  await store.search.settled();
  const again = await store.search.reindex();
  t.equal(again.state, 'complete', 'indexed a second time');
  await store.close();
  store = LmdbNodeStore.open(dir);
  t.teardown(() => store.close());
  const ids = all.map((m) => m.id);
  const paged = async (range: { before?: string; after?: string }, size: number) => {
    const out: string[] = [];
    for (let before = range.before; ; ) {
      const page = await store.search.postings(appId, 'harbor', { ...range, ...(before === undefined ? {} : { before }) }, size);
      out.push(...page.map((p) => p.messageId));
      if (page.length < size) return out;
      before = page.at(-1)!.messageId;
    }
  };
  t.same(await paged({}, 13), [...ids].reverse(), 'all of them, each once');
  for (const [from, to, size] of [[5, 17, 4], [18, 63, 7], [0, 119, 200], [40, 41, 1], [99, 101, 50]] as const) {
    t.same(await paged({ after: ids[from], before: ids[to] }, size), ids.slice(from + 1, to).reverse(), `between messages ${from} and ${to}, pages of ${size}`);
  }
  t.same(await store.search.postings(appId, 'harbor', { before: ids[60] }, 25), ids.slice(35, 60).reverse().map((messageId) => ({ messageId, logId: chatId })), 'the newest 25 below one, as postings');
});

// A write of more keys than one transaction takes (WRITE_PUTS), and more records than one removes:
// every word of every message is read back after a close and a reopen, each message once.
t.test('lmdb search: a write in several transactions keeps every word of every message', async (t) => {
  const { dir, appId, chatId } = scratch(t);
  const all = messagesOf(appId, chatId, 600, 10, (i) => `ferry unique${i} shared${i % 7}`);
  let store = LmdbNodeStore.open(dir);
  // One put each: 600 records, and 600 + 8 words, written by the close.
  for (const m of all) await store.messages.put([m]);
  await store.close();
  store = LmdbNodeStore.open(dir);
  t.teardown(() => store.close());
  const found = await store.search.postings(appId, 'ferry', {}, 1_000);
  t.same(found.map((p) => p.messageId), all.map((m) => m.id).reverse(), 'the common word: every message once, newest first');
  const unique = await Promise.all(all.map((_, i) => store.search.postings(appId, `unique${i}`, {}, 10)));
  t.ok(unique.every((p, i) => p.length === 1 && p[0]!.messageId === all[i]!.id), 'each message\'s own word, written in one of several transactions');
  t.equal((await store.search.termsWithPrefix(appId, 'unique5', 1_000)).length, 111, 'the dictionary: unique5, unique50-59 and unique500-599');
});

/** A directory removed after the test, and an application and a chat of its own. */
function scratch(t: Test): { dir: string; appId: string; chatId: string } {
  const dir = mkdtempSync(join(tmpdir(), 'search-layers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, appId: randomUUID(), chatId: randomUUID() };
}

/** `count` messages of one chat, `gapMs` apart from a fixed time, with `content(i)` as text. */
function messagesOf(appId: string, chatId: string, count: number, gapMs: number, content: (i: number) => string): StoredMessage[] {
  const start = Date.parse('2026-11-30T09:00:00.000Z');
  return Array.from({ length: count }, (_, i) => {
    const at = start + i * gapMs;
    return { appId, chatId, id: uuidv7({ msecs: at }), seq: i + 1, senderId: 'ann', content: content(i), createdAt: new Date(at).toISOString(), reactions: [] };
  });
}
