import t from 'tap';
import { messageJson } from '../../node/chat/index.ts';
import { ackFrame, eventFrame } from '../../node/realtime/index.ts';

// A realtime frame puts in the JSON of its message when it was made already (eventFrame's
// `messageText`): the frame must be the very text JSON.stringify gives.
t.test('a frame given its message text is the frame made from scratch, whatever the content', async (t) => {
  const contents = ['plain', 'he wrote "message":"\u0000" here', '\u0000', '{"message":"\\u0000"}', 'ünïcödé ✓ \u2028 \ud83d\ude00', ''];
  for (const [i, content] of contents.entries()) {
    const message = { chatId: 'c1', timeStamp: '2026-01-01T00:00:00.000Z', messageId: 'm1', senderId: 'u1', content, edited: false, seq: 3, deleted: false, reactions: [], reactionCounts: {}, type: 'regular' as const, replyTo: { chatId: 'c1', timeStamp: '', messageId: 'm0', senderId: 'u2', content: `"message":"\u0000"${content}`, edited: false } };
    const event = { type: 'message.new' as const, chatId: 'c1', seq: 3, rev: 4, message };
    const fromScratch = JSON.stringify({ v: 1, ...event });
    t.equal(eventFrame(event), fromScratch, `content ${i}, without its text`);
    t.equal(eventFrame(event, JSON.stringify(message)), fromScratch, `content ${i}, with its text`);
    t.equal(eventFrame({ ...event, replay: true }, JSON.stringify(message)), JSON.stringify({ v: 1, ...event, replay: true }), `content ${i}, replayed`);
  }
  // Fields in another order, and one with no JSON value (left out, as JSON.stringify leaves it).
  const message = { chatId: 'c1', timeStamp: '', messageId: 'm2', senderId: 'u1', content: 'x', edited: false, seq: 4, deleted: false, reactions: [], reactionCounts: {}, type: 'regular' as const };
  const reordered = { type: 'message.edited' as const, message, chatId: 'c1', rev: 9, reason: undefined };
  t.equal(eventFrame(reordered as never, JSON.stringify(message)), JSON.stringify({ v: 1, ...reordered }), 'fields in the order of the event, undefined ones left out');
  const typing = { type: 'typing.started' as const, chatId: 'c1', userId: 'u1' };
  t.equal(eventFrame(typing, '{"x":1}'), JSON.stringify({ v: 1, ...typing }), 'an event without a message ignores a text');
});

// An ack whose message went out as an event reuses the event's message JSON (chat/message-json.ts):
// the frame must still be the very text JSON.stringify gives, for every result shape.
t.test('an ack frame is the frame made from scratch, with or without its message made already', async (t) => {
  const contents = ['plain', 'he wrote "message":"\u0000" here', 'ünïcödé ✓ \u2028 \ud83d\ude00'];
  for (const [i, content] of contents.entries()) {
    const message = { chatId: 'c1', timeStamp: '2026-01-01T00:00:00.000Z', messageId: `m${i}`, senderId: 'u1', content, edited: false, seq: 3, deleted: false, reactions: [], reactionCounts: {}, type: 'regular' as const };
    const results = [{ message, created: true }, { created: false, message }, { message }];
    const id = `a"${i}\u2028`;
    for (const result of results) t.equal(ackFrame(id, result), JSON.stringify({ v: 1, type: 'ack', id, result }), `content ${i}, before its event`);
    t.equal(messageJson(message), JSON.stringify(message), 'the message JSON is JSON.stringify of the view');
    for (const result of results) t.equal(ackFrame(id, result), JSON.stringify({ v: 1, type: 'ack', id, result }), `content ${i}, after its event`);
  }
  for (const result of [{}, { readSeq: 4 }, { online: ['u1'] }, { message: 'not a view' }]) t.equal(ackFrame('x', result), JSON.stringify({ v: 1, type: 'ack', id: 'x', result }), JSON.stringify(result));
});
