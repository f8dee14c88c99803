import t from 'tap';
import { decodeChatWire, encodeFrames, encodeWire } from '../../node/cluster/wire.ts';

t.test('a chat’s event frames cross the bus as one message and come out as the same strings, in order', async (t) => {
  const frames = ['{"v":1,"type":"message.new","seq":1}', '{"v":1,"type":"message.new","seq":2,"content":"héllo ✓"}', '{}'];
  t.same(decodeChatWire(encodeFrames(frames)), { t: 'f', frames });
  t.same(decodeChatWire(encodeFrames([])), { t: 'f', frames: [] });
  const whole = encodeFrames(frames);
  t.equal(decodeChatWire(whole.subarray(0, whole.length - 3)), undefined, 'a truncated message is dropped, not half-read');
  t.equal(decodeChatWire(Buffer.concat([whole, Buffer.from([0, 0])])), undefined, 'so is one with trailing bytes');
});

t.test('JSON messages still decode beside them', async (t) => {
  const replay = { t: 'r' as const, to: { nodeId: 'n', connId: 'c' }, frames: [{ type: 'resumed' }], entry: null };
  t.same(decodeChatWire(encodeWire(replay)), replay);
  t.equal(decodeChatWire('{"t":"unknown"}'), undefined, 'an unknown shape is ignored');
  t.equal(decodeChatWire('not json'), undefined);
});
