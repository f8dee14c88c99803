import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { LmdbNodeStore, threadLogId, type StoredMessage } from '../../node/store/index.ts';

// The embedded store's backfill of the search index (node/store/lmdb/search-backfill.ts): messages
// stored while nothing indexed them are found once a store with the index opens.

const freshDir = async (t: { teardown(fn: () => unknown): void }) => {
  const dir = await mkdtemp(join(tmpdir(), 'search-backfill-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
};

let at = Date.parse('2026-03-01T09:00:00.000Z');
const message = (appId: string, chatId: string, seq: number, content: string, extra: Partial<StoredMessage> = {}): StoredMessage => {
  at += 61_000;
  return { appId, chatId, id: uuidv7({ msecs: at }), seq, senderId: 'ann', content, createdAt: new Date(at).toISOString(), reactions: [], ...extra };
};
const ids = async (store: LmdbNodeStore, appId: string, term: string) => (await store.search.postings(appId, term, {}, 100)).map((p) => p.messageId).sort();

t.test('lmdb: messages stored with the index off are found once a store with the index opens; deleted ones are not', async (t) => {
  const dir = await freshDir(t);
  const [appId, otherApp, c1, c2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
  const first = message(appId, c1, 1, 'Apple and banana');
  const cherry = message(appId, c1, 2, 'cherry pie');
  const durian = message(appId, c2, 1, 'an apple, a durian');
  const reply = message(appId, threadLogId(c1, first.id), 1, 'elderberry apple', { parentId: first.id });
  const ghost = message(appId, c2, 2, 'ghostword');
  const phantom = message(appId, c2, 3, 'phantom words', { deletedAt: new Date(at).toISOString() });
  const tenant = message(otherApp, randomUUID(), 1, 'apple of another tenant');

  const off = LmdbNodeStore.open(dir, undefined, { searchIndex: false });
  await off.messages.put([first, cherry]);
  await off.messages.put([durian, ghost, phantom]);
  await off.messages.put([reply]);
  await off.messages.put([tenant]);
  // A deletion as the service writes it: a tombstone without text.
  await off.messages.put([{ ...ghost, content: '', deletedAt: new Date(at).toISOString(), rev: 2 }]);
  t.equal(off.search.backfillProgress().state, 'off', 'the index off: no backfill');
  t.same(await ids(off, appId, 'apple'), [], 'and nothing indexed');
  await off.close();

  const on = LmdbNodeStore.open(dir);
  const done = await on.search.backfill;
  t.match(done, { state: 'complete', messages: 5, scanned: 7, scannedNow: 7, resumedAt: 0 }, 'every stored message read, the five with text recorded');
  await on.search.settled();
  t.same(await ids(on, appId, 'apple'), [first.id, durian.id, reply.id].sort(), "old messages of both chats and a thread's reply are found");
  t.same(await on.search.postings(appId, 'elderberry', {}, 10), [{ messageId: reply.id, logId: reply.chatId }], "a reply's posting names its thread's log");
  t.same(await ids(on, appId, 'cherry'), [cherry.id]);
  t.same(await ids(on, appId, 'ghostword'), [], 'a deleted message is not indexed');
  t.same(await ids(on, appId, 'phantom'), [], 'nor one marked deleted that kept its text');
  t.same(await ids(on, otherApp, 'apple'), [tenant.id], "another application's message, in its own index");
  t.same(await on.search.termsWithPrefix(appId, 'dur', 10), ['durian'], 'its words are in the dictionary, for prefixes');

  // Written while the backfill is complete: indexed by its own put.
  const fresh = message(appId, c1, 3, 'fresh apple');
  await on.messages.put([fresh]);
  await on.search.settled();
  t.same(await ids(on, appId, 'apple'), [first.id, durian.id, reply.id, fresh.id].sort());
  await on.close();

  const again = LmdbNodeStore.open(dir);
  t.teardown(() => again.close());
  t.match(await again.search.backfill, { state: 'complete', messages: 5, scannedNow: 0 }, 'once complete, the next open reads nothing again');

  // Messages put while the index was off since: found after a reindex.
  const off2 = LmdbNodeStore.open(dir, undefined, { searchIndex: false });
  const late = message(appId, c2, 4, 'late apple');
  await off2.messages.put([late]);
  await off2.close();
  t.same(await ids(again, appId, 'late'), [], 'a message put with the index off is not found');
  t.match(await again.search.reindex(), { state: 'complete', messages: 7, scanned: 9, scannedNow: 9, resumedAt: 0 }, 'a reindex reads every message again from the first');
  t.same(await ids(again, appId, 'late'), [late.id], 'and indexes it (indexed once the reindex resolves)');
  t.same(await ids(again, appId, 'apple'), [first.id, durian.id, reply.id, fresh.id, late.id].sort(), 'messages indexed twice are found once');
});

t.test('lmdb: a backfill stopped after some chunks goes on where it stopped at the next open', async (t) => {
  const dir = await freshDir(t);
  const appId = randomUUID();
  const chats = [randomUUID(), randomUUID(), randomUUID()];
  const messages = Array.from({ length: 30 }, (_, i) => message(appId, chats[i % 3]!, Math.floor(i / 3) + 1, `common word${i}`));
  const off = LmdbNodeStore.open(dir, undefined, { searchIndex: false });
  for (let i = 0; i < messages.length; i += 5) await off.messages.put(messages.slice(i, i + 5));
  await off.close();

  const first = LmdbNodeStore.open(dir, undefined, { searchBackfillChunk: 4 });
  // Closed as soon as its first chunk (one transaction) committed.
  while (first.search.backfillProgress().scanned === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  await first.close();
  const stopped = first.search.backfillProgress();
  t.equal(stopped.state, 'stopped', 'a close stops it');
  t.ok(stopped.scanned >= 4 && stopped.scanned < 30 && stopped.scanned % 4 === 0, `stopped after whole chunks, before the end (${stopped.scanned} of 30 read)`);

  const second = LmdbNodeStore.open(dir, undefined, { searchBackfillChunk: 4 });
  t.teardown(() => second.close());
  const done = await second.search.backfill;
  t.match(done, { state: 'complete', messages: 30, scanned: 30, resumedAt: stopped.scanned, scannedNow: 30 - stopped.scanned }, 'the next open read only the messages after the last chunk done');
  for (const [i, m] of messages.entries()) t.same(await ids(second, appId, `word${i}`), [m.id], `word${i}`);
  t.equal((await ids(second, appId, 'common')).length, 30, 'every message, each once');
});

// A put's pending record ('p', search-pending.ts) that a crash left is indexed at the next open;
// one left by a version that kept it as a msgpack array (not JSON text) is read as it is.
t.test('lmdb: a pending record an earlier version left as an array is indexed at the next open', async (t) => {
  const dir = await freshDir(t);
  const appId = randomUUID();
  const chatId = randomUUID();
  const first = LmdbNodeStore.open(dir);
  t.match(await first.search.backfill, { state: 'complete', messages: 0 }, 'nothing to backfill: the backfill is complete');
  await first.close();
  // Stored without the index, then its record written as the earlier version did.
  const off = LmdbNodeStore.open(dir, undefined, { searchIndex: false });
  const m = message(appId, chatId, 1, 'leftover quince');
  await off.messages.put([m]);
  await off.close();
  const raw = open({ path: dir, maxDbs: 16, compression: false });
  await raw.openDB<unknown, (string | number)[]>({ name: 'search', encoding: 'msgpack' }).put(['p', m.id, 'earlier.0'], [m.id, appId, chatId]);
  await raw.close();

  const again = LmdbNodeStore.open(dir);
  t.teardown(() => again.close());
  t.match(await again.search.backfill, { state: 'complete', scannedNow: 0 }, 'the backfill reads nothing again');
  await again.search.settled();
  t.same(await ids(again, appId, 'quince'), [m.id], "the record's message is indexed");
});
