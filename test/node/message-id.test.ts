import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { MAX_ENCODED_SEQ, newMessageId, seqOfMessageId } from '../../node/store/index.ts';
import { uuidv7Time } from '../../node/store/buckets.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('message ids are UUIDv7 carrying their time and their seq, ordered like the seq', async (t) => {
  const before = Date.now();
  const ids = Array.from({ length: 50_000 }, (_, i) => newMessageId(i + 1));
  const after = Date.now();
  t.ok(ids.every((id) => V7.test(id)), 'version 7, RFC 9562 variant');
  t.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]!), 'a chat’s ids increase with its seqs');
  t.ok(ids.every((id, i) => seqOfMessageId(id) === i + 1), 'each carries its seq');
  t.ok(uuidv7Time(ids[0]!) >= before && uuidv7Time(ids.at(-1)!) <= after + 1, 'the time is the creation time');
  const pinned = Array.from({ length: 1000 }, (_, i) => newMessageId(60_000 + i, after));
  t.ok(pinned.every((id, i) => i === 0 || id > pinned[i - 1]!), 'increasing within one millisecond');
  t.ok(newMessageId(70_000, after - 5000) > pinned.at(-1)!, 'and when the clock steps back');
  for (const seq of [0, 1, 63, 64, 2 ** 14, 2 ** 20 - 1, 2 ** 20, 2 ** 28 + 5, MAX_ENCODED_SEQ]) t.equal(seqOfMessageId(newMessageId(seq)), seq, `seq ${seq} round-trips`);
});

t.test('ids of the same seq in many chats do not repeat', async (t) => {
  const now = Date.now();
  const ids = Array.from({ length: 100_000 }, () => newMessageId(1, now));
  t.equal(new Set(ids).size, ids.length, '100,000 first messages in one millisecond, all distinct');
});

t.test('a seq too large to carry gets random bits there, and anything else is only a hint', async (t) => {
  const huge = newMessageId(MAX_ENCODED_SEQ + 1);
  t.ok(V7.test(huge));
  t.not(seqOfMessageId(huge), MAX_ENCODED_SEQ + 1);
  t.type(seqOfMessageId(uuidv7()), 'number', 'any UUID decodes to some number (a store checks the message found there)');
  t.equal(seqOfMessageId('not-a-uuid'), undefined);
  t.equal(seqOfMessageId('zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz'), undefined);
});
