import t from 'tap';
import { ChatActivity } from '../../node/chat/chat-activity.ts';
import { GroupCommit } from '../../node/chat/group-commit.ts';
import { MessageCache } from '../../node/chat/message-cache.ts';
import { SerialQueue } from '../../node/chat/serial-queue.ts';
import type { StoredMessage } from '../../node/store/index.ts';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A promise and the functions that settle it. */
function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

t.test('serial queue: one operation at a time, in queue order; a failure stops only itself', async (t) => {
  const queue = new SerialQueue();
  const log: string[] = [];
  const gate = deferred();
  const first = queue.run(async () => {
    log.push('first starts');
    await gate.promise;
    log.push('first ends');
    return 1;
  });
  const second = queue.run(() => {
    log.push('second');
    throw new Error('boom');
  });
  const third = queue.run(() => {
    log.push('third');
    return 3;
  });
  await ticks();
  t.same(log, ['first starts'], 'nothing else runs while the first is running');
  t.equal(queue.length, 3);
  gate.resolve();
  t.equal(await first, 1);
  await t.rejects(second, /boom/);
  t.equal(await third, 3, 'the queue goes on after a failure');
  t.same(log, ['first starts', 'first ends', 'second', 'third']);
  await queue.idle();
  t.equal(queue.length, 0);
});

t.test('group commit: batches while one write is in flight; durability before acknowledgement, in order', async (t) => {
  const writes: { batch: number[]; done: Deferred }[] = [];
  const events: string[] = [];
  const commit = new GroupCommit<number>({
    maxBatch: 3,
    write: (batch) => {
      const done = deferred();
      writes.push({ batch, done });
      return done.promise;
    },
    onDurable: (batch) => events.push(`durable ${batch.join(',')}`),
  });
  const acks = [1, 2, 3, 4, 5, 6, 7].map((n) => commit.add(n).then(() => events.push(`ack ${n}`)));
  await ticks();
  t.same(writes.map((w) => w.batch), [[1, 2, 3]], 'one write in flight, at most maxBatch items');
  t.equal(commit.pending, 5);
  t.equal(commit.oldest(), 1, 'the oldest item is the first of the batch in flight');
  writes[0]!.done.resolve();
  await ticks();
  t.same(writes.map((w) => w.batch), [[1, 2, 3], [4, 5, 6]], 'the next batch filled while the first was written');
  t.same(events, ['durable 1,2,3', 'ack 1', 'ack 2', 'ack 3'], 'durability first, then each acknowledgement in order');
  writes[1]!.done.resolve();
  await ticks();
  writes[2]!.done.resolve();
  await Promise.all(acks);
  t.same(events.slice(4), ['durable 4,5,6', 'ack 4', 'ack 5', 'ack 6', 'durable 7', 'ack 7']);
  await commit.drained();
  t.notOk(commit.busy);
});

t.test('group commit: a failed write refuses its batch, everything queued behind it, and everything after', async (t) => {
  const writes: Deferred[] = [];
  const durable: number[][] = [];
  const commit = new GroupCommit<number>({
    maxBatch: 2,
    write: () => {
      const done = deferred();
      writes.push(done);
      return done.promise;
    },
    onDurable: (batch) => durable.push(batch),
  });
  const outcomes = [1, 2, 3, 4].map((n) => commit.add(n).then(() => 'ok', (e: Error) => e.message));
  await ticks();
  writes[0]!.reject(new Error('disk gone'));
  t.same(await Promise.all(outcomes), ['disk gone', 'disk gone', 'disk gone', 'disk gone']);
  t.same(durable, [], 'nothing became durable');
  t.ok(commit.failed);
  await t.rejects(commit.add(5), /disk gone/, 'a later item is refused at once');
  t.equal(writes.length, 1, 'and nothing more is written');
  await commit.drained();
});

t.test('chat activity: one write in flight, spaced by the interval, retried after a failure, always ending with the latest state', async (t) => {
  let state = 0;
  const written: number[] = [];
  const inFlight: Deferred[] = [];
  const activity = new ChatActivity(() => {
    written.push(state);
    const done = deferred();
    inFlight.push(done);
    return done.promise;
  }, 20);
  state = 1;
  activity.touch();
  state = 2;
  activity.touch();
  state = 3;
  activity.touch();
  t.same(written, [1], 'the first change is written at once, the next ones wait');
  inFlight[0]!.resolve();
  await activity.inFlight();
  t.same(written, [1], 'not before the interval');
  await new Promise((resolve) => setTimeout(resolve, 40));
  t.same(written, [1, 3], 'then the latest state, once');
  inFlight[1]!.reject(new Error('store down'));
  await new Promise((resolve) => setTimeout(resolve, 40));
  t.same(written, [1, 3, 3], 'a failed write is tried again (the interval after it started), with nothing newer to carry its state');
  inFlight[2]!.resolve();
  await activity.inFlight();
  await new Promise((resolve) => setTimeout(resolve, 40));
  t.same(written, [1, 3, 3], 'and not again once it succeeded');
  state = 4;
  activity.touch();
  const flushed = activity.flush();
  await ticks();
  t.equal(written.at(-1), 4, 'flush starts the write at once, without waiting out the interval');
  inFlight.at(-1)!.resolve();
  await flushed;
  t.equal(written.at(-1), 4, 'flush writes the latest state now and waits for it');
  activity.stop();
  state = 5;
  activity.touch();
  await ticks();
  t.equal(written.at(-1), 4, 'nothing after stop');
});

t.test('chat activity: changes spaced wider than a write still start writes at most once per interval', async (t) => {
  const starts: number[] = [];
  const activity = new ChatActivity(async () => void starts.push(performance.now()), 50);
  t.teardown(() => activity.stop());
  const until = performance.now() + 260;
  let lastTouch = 0;
  while (performance.now() < until) {
    activity.touch();
    lastTouch = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const spaced = [...starts];
  const flushedAt = performance.now();
  await activity.flush();
  t.ok(spaced.length <= 6, `${spaced.length} writes for ~50 changes over 260 ms`);
  t.ok(spaced.every((at, i) => i === 0 || at - spaced[i - 1]! >= 48), 'each about the interval after the one before (timers round to the millisecond)');
  // The latest change is written by the time flush resolves: by a write flush started at once, or
  // by one the timer had started after that change (on a busy machine it may fire first).
  t.ok(starts.at(-1)! >= lastTouch, 'and after flush, a write started after the latest change');
  t.ok(starts.length === spaced.length || starts.at(-1)! >= flushedAt, 'flush started at most one, at once');
});

t.test('message cache: keeps the last writes, and says which changes it covers', async (t) => {
  const msg = (seq: number, rev = seq): StoredMessage => ({ appId: 'a', chatId: 'c', id: `m${seq}`, seq, senderId: 'u', content: `v${rev}`, createdAt: '', reactions: [], rev });
  const cache = new MessageCache(3, 0);
  for (const seq of [1, 2, 3]) cache.remember(msg(seq));
  t.ok(cache.coversChangesAfter(0), 'every write since the start is kept');
  cache.remember(msg(4));
  t.equal(cache.get('m1'), undefined, 'the least recently written is evicted');
  t.notOk(cache.coversChangesAfter(0), 'so changes after revision 0 are no longer all kept');
  t.ok(cache.coversChangesAfter(1));
  const edit = { ...msg(2, 5), content: 'edited' };
  cache.pending(edit);
  t.equal(cache.get('m2')?.content, 'edited', 'a change on its way is what later changes read');
  t.equal(cache.durableState('m2')?.content, 'v2', 'but not yet the durable state');
  cache.remember(edit);
  t.same(cache.bySeq(1, 4).map((m) => m.seq), [2, 3, 4]);
  t.same(cache.byRev(2, 5).map((m) => m.rev), [3, 4, 5], 'by revision, the edit last');
  t.equal(cache.newest(3)?.seq, 3);
});
