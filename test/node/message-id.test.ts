import t from 'tap';
import { newMessageId } from '../../node/chat/message-id.ts';
import { uuidv7Time } from '../../node/store/buckets.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('message ids are UUIDv7 carrying their time, strictly increasing, never repeated', async (t) => {
  const before = Date.now();
  const ids = Array.from({ length: 50_000 }, () => newMessageId());
  const after = Date.now();
  t.ok(ids.every((id) => V7.test(id)), 'version 7, RFC 9562 variant');
  t.ok(ids.every((id, i) => i === 0 || id > ids[i - 1]!), 'each greater than the one before');
  t.equal(new Set(ids).size, ids.length, 'no repeat');
  t.ok(uuidv7Time(ids[0]!) >= before && uuidv7Time(ids.at(-1)!) <= after + 1, 'the time is the creation time');
  const pinned = Array.from({ length: 1000 }, () => newMessageId(after));
  t.ok(pinned.every((id, i) => id > (i === 0 ? ids.at(-1)! : pinned[i - 1]!)), 'still increasing within one millisecond');
  const earlier = newMessageId(after - 5000);
  t.ok(earlier > pinned.at(-1)!, 'and when the clock steps back');
});
