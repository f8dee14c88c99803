import t from 'tap';
import { messageView } from '../../node/chat/views.ts';
import type { StoredMessage } from '../../node/store/index.ts';

// Views are built as object literals, one per shape (chat/views.ts): their fields must still come
// in the API's order in every shape, since clients and the JSON frames see that order.
const base: StoredMessage = { appId: 'a', chatId: 'c', id: 'm2', seq: 2, senderId: 'u1', content: 'hi', createdAt: '2030-01-01T00:00:00.000Z', reactions: [], rev: 2 };
const replied: StoredMessage = { ...base, id: 'm1', seq: 1, content: 'first', editedAt: '2030-01-01T00:01:00.000Z' };
const reaction = { reactionId: 'r1', userId: 'u2', reaction: '👍', createdAt: '2030-01-01T00:02:00.000Z' };

t.test('message views: fields in the API order in every shape', async (t) => {
  const head = ['chatId', 'timeStamp', 'messageId', 'senderId', 'content', 'edited'];
  t.same(Object.keys(messageView(base, undefined)), [...head, 'seq', 'deleted', 'reactions', 'reactionCounts', 'type']);
  t.same(Object.keys(messageView({ ...base, editedAt: '2030-01-01T00:03:00.000Z' }, undefined)), [...head, 'editedAt', 'seq', 'deleted', 'reactions', 'reactionCounts', 'type']);
  t.same(Object.keys(messageView({ ...base, deletedAt: '2030-01-01T00:04:00.000Z', content: '' }, undefined)), [...head, 'seq', 'deleted', 'reactions', 'reactionCounts', 'type', 'deletedAt']);
  t.same(Object.keys(messageView({ ...base, hiddenAt: '2030-01-01T00:05:00.000Z' }, replied)), [...head, 'seq', 'deleted', 'reactions', 'reactionCounts', 'type', 'hidden', 'replyTo']);
  const withAll = messageView({ ...base, reactions: [reaction] }, replied);
  t.same(withAll.replyTo, { chatId: 'c', timeStamp: replied.createdAt, messageId: 'm1', senderId: 'u1', content: 'first', edited: true, editedAt: replied.editedAt });
  t.same(Object.keys(withAll.replyTo!), [...head, 'editedAt']);
  t.same(withAll.reactions, [{ reactionId: 'r1', chatId: 'c', messageId: 'm2', senderId: 'u2', reaction: '👍', createdAt: reaction.createdAt }]);
  t.equal(messageView({ ...base, hiddenAt: '2030-01-01T00:05:00.000Z' }, undefined).content, '', 'a hidden message shows no content');
  t.equal(messageView({ ...base, hiddenAt: 'x', deletedAt: 'y' }, undefined).hidden, undefined, 'a deleted message is not also hidden');
});
