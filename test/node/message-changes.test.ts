import t from 'tap';
import { ApiError } from '../../common/index.ts';
import { CHAT_LIMITS } from '../../node/chat/limits.ts';
import { deleted, edited, moderated, reacted, type Change } from '../../node/chat/message-changes.ts';
import type { StoredMessage } from '../../node/store/index.ts';

// The rules of a change to one message (message-changes.ts), as pure functions of its state.

const AT = '2030-01-01T00:00:00.000Z';
const message = (over: Partial<StoredMessage> = {}): StoredMessage => ({ appId: 'a', chatId: 'c', id: 'm', seq: 1, senderId: 'author', content: 'hi', createdAt: AT, reactions: [], ...over });
const code = (c: Change) => (c instanceof ApiError ? c.code : c.event);

t.test('edits: the author only, never a deleted message', async (t) => {
  t.equal(code(edited(message(), 'other', { content: 'x' }, AT)), 'NOT_ALLOWED');
  t.equal(code(edited(message({ deletedAt: AT }), 'author', { content: 'x' }, AT)), 'MESSAGE_DELETED');
  const ok = edited(message(), 'author', { content: 'new' }, AT);
  t.same(ok instanceof ApiError ? ok : [ok.event, ok.message.content, ok.message.editedAt], ['message.edited', 'new', AT]);
});

t.test("deletes: the author, the owner or an admin; content and reactions go; a second delete changes nothing", async (t) => {
  const withReaction = message({ reactions: [{ reactionId: 'r', userId: 'u', reaction: '👍', createdAt: AT }] });
  t.equal(code(deleted(withReaction, 'other', 'member', AT)), 'NOT_ALLOWED', 'a plain member deletes only its own');
  for (const [who, role] of [['author', 'member'], ['other', 'admin'], ['other', 'owner']] as const) {
    const d = deleted(withReaction, who, role, AT);
    t.same(d instanceof ApiError ? d : [d.event, d.message.content, d.message.reactions, d.message.deletedAt], ['message.deleted', '', [], AT], `${role} ${who}`);
  }
  t.equal(code(deleted(message({ deletedAt: AT }), 'author', 'member', AT)), undefined, 'deleting a deleted message is a no-op');
});

t.test('reactions: once per user and value, bounded per user and per message; taking back what is not there is a no-op', async (t) => {
  const first = reacted(message(), 'u', '👍', true, AT);
  if (first instanceof ApiError) return t.fail(first.detail);
  t.equal(first.event, 'reaction.added');
  t.equal(code(reacted(first.message, 'u', '👍', true, AT)), undefined, 'the same reaction again changes nothing');
  t.equal(code(reacted(first.message, 'v', '👎', false, AT)), undefined, 'taking back a reaction never made changes nothing');
  const back = reacted(first.message, 'u', '👍', false, AT);
  t.same(back instanceof ApiError ? back : [back.event, back.message.reactions], ['reaction.removed', []]);
  t.equal(code(reacted(message({ deletedAt: AT }), 'u', '👍', true, AT)), 'MESSAGE_DELETED');
  const full = message({ reactions: Array.from({ length: CHAT_LIMITS.reactionsPerUser }, (_, i) => ({ reactionId: `r${i}`, userId: 'u', reaction: `e${i}`, createdAt: AT })) });
  t.equal(code(reacted(full, 'u', 'one more', true, AT)), 'VALIDATION_FAILED', `at most ${CHAT_LIMITS.reactionsPerUser} per user`);
  t.equal(code(reacted(full, 'v', 'e0', true, AT)), 'reaction.added', 'another user still reacts');
});

t.test('reviews: hide, restore, delete; a deleted message stays as it is', async (t) => {
  const hidden = moderated(message(), 'hide', AT);
  if (hidden instanceof ApiError) return t.fail(hidden.detail);
  t.same([hidden.event, hidden.message.hiddenAt], ['message.hidden', AT]);
  t.equal(code(moderated(hidden.message, 'hide', AT)), undefined, 'hiding twice changes nothing');
  const restored = moderated(hidden.message, 'restore', AT);
  t.same(restored instanceof ApiError ? restored : [restored.event, 'hiddenAt' in restored.message], ['message.restored', false]);
  t.equal(code(moderated(message(), 'restore', AT)), undefined, 'restoring a visible message changes nothing');
  t.equal(code(moderated(message(), 'delete', AT)), 'message.deleted');
  t.equal(code(moderated(message({ deletedAt: AT }), 'hide', AT)), undefined);
});
