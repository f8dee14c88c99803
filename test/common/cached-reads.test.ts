import t from 'tap';
import { CachedReads } from '../../common/cache/index.ts';
import { BackendUnavailableError } from '../../common/index.ts';

// The read-through cache of applications' settings on a node (attachment and push settings).

t.test('one read per key within the TTL, shared by concurrent asks; again after changed or the TTL', async (t) => {
  let now = 0;
  const reads: string[] = [];
  let answer = 'v1';
  const cache = new CachedReads(async (key) => (reads.push(key), `${key}:${answer}`), { ttlMs: 1000, what: 'settings', now: () => now });
  t.same(await Promise.all([cache.get('a'), cache.get('a'), cache.get('a')]), ['a:v1', 'a:v1', 'a:v1']);
  t.same(reads, ['a'], 'three concurrent asks, one read');
  t.equal(cache.get('a'), 'a:v1', 'then answered from memory, synchronously');
  answer = 'v2';
  now = 999;
  t.equal(cache.get('a'), 'a:v1', 'within the TTL: the value read');
  cache.changed('a');
  t.equal(await cache.get('a'), 'a:v2', 'changed: read again at once');
  answer = 'v3';
  now = 999 + 1000;
  t.equal(await cache.get('a'), 'a:v3', 'past the TTL: read again');
  t.same(reads, ['a', 'a', 'a']);
});

t.test('a read that began before a change is answered but not kept', async (t) => {
  let release!: (v: string) => void;
  let calls = 0;
  const cache = new CachedReads<string>(() => (calls++, new Promise<string>((r) => (release = r))), { ttlMs: 60_000, what: 'settings' });
  const early = cache.get('a') as Promise<string>;
  cache.changed('a');
  release('old');
  t.equal(await early, 'old', 'the caller gets what it asked for');
  const late = cache.get('a');
  t.ok(late instanceof Promise, 'not kept: the next ask reads');
  release('new');
  t.equal(await late, 'new');
  t.equal(calls, 2);
});

t.test('a failed read: the value last read stands; with none, 503 naming what', async (t) => {
  let now = 0;
  let fail = false;
  const cache = new CachedReads(async (key) => {
    if (fail) throw new Error('store down');
    return key.toUpperCase();
  }, { ttlMs: 10, what: 'push settings', now: () => now });
  t.equal(await cache.get('a'), 'A');
  fail = true;
  now = 100;
  t.equal(await cache.get('a'), 'A', 'stale, rather than nothing');
  const failed = await Promise.resolve(cache.get('b')).catch((e: unknown) => e);
  t.ok(failed instanceof BackendUnavailableError && failed.backend === 'push settings', 'never read: unavailable, naming what');
});

t.test('at most maxKeys kept, the newest half at least, the oldest read forgotten first', async (t) => {
  let reads = 0;
  const cache = new CachedReads(async (key) => (reads++, key), { ttlMs: 60_000, what: 'settings', maxKeys: 4 });
  for (const k of ['a', 'b', 'c', 'd', 'e']) await cache.get(k);
  t.equal(reads, 5);
  t.equal(cache.get('e'), 'e', 'the newest kept');
  t.equal(cache.get('d'), 'd');
  t.ok(cache.get('a') instanceof Promise, 'the oldest forgotten');
  t.equal(reads, 6, 'and read again');
});
