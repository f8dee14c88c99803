import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../common/index.ts';
import type { MemberRole, StoredMessage } from '../store/index.ts';
import { CHAT_LIMITS } from './limits.ts';
import { storedData } from './custom-data.ts';
import type { EditInput } from './send-input.ts';

/**
 * The rules of a change to one stored message, as pure functions of its state: who may make it,
 * what it refuses, and the message's next state with the event it makes (none for a change that
 * changes nothing, such as deleting a deleted message). The chat's actor reads the message, applies
 * one of these in its serial queue and writes the result through its group commit.
 */
export type Change =
  | ApiError
  | {
      message: StoredMessage;
      event: 'message.edited' | 'message.deleted' | 'message.hidden' | 'message.restored' | 'reaction.added' | 'reaction.removed' | undefined;
      reaction?: StoredMessage['reactions'][number];
    };

const unchanged = (m: StoredMessage): Change => ({ message: m, event: undefined });

/** Only the author edits, never a deleted message nor a system one; content, data or both change. */
export function edited(m: StoredMessage, userId: string, change: EditInput, at: string): Change {
  if (m.senderId !== userId) return new ApiError('NOT_ALLOWED', 'only the author can edit a message');
  if (m.type === 'system') return new ApiError('NOT_ALLOWED', 'a system message is not edited by a member');
  if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message cannot be edited');
  const next: StoredMessage = { ...m, editedAt: at };
  if (change.content !== undefined) next.content = change.content;
  if (change.data !== undefined) {
    const data = storedData(change.data);
    if (data === undefined) delete next.data;
    else next.data = data;
  }
  return { message: next, event: 'message.edited' };
}

/** The author, or the chat's owner or an admin, deletes: content and reactions go, a tombstone stays. */
export function deleted(m: StoredMessage, userId: string, role: MemberRole | undefined, at: string): Change {
  if (m.senderId !== userId && role !== 'owner' && role !== 'admin') return new ApiError('NOT_ALLOWED', 'only the author or a chat admin can delete a message');
  if (m.deletedAt) return unchanged(m);
  return { message: tombstone(m, at), event: 'message.deleted' };
}

/** A deleted message: its content, reactions and data go; its seq, sender, files (for their deletion) and type stay. */
function tombstone(m: StoredMessage, at: string): StoredMessage {
  const { data: _, ...rest } = m;
  return { ...rest, content: '', reactions: [], deletedAt: at };
}

/**
 * Why one more reaction cannot go on a message, if it cannot: its size is bounded (a message and
 * its reactions are stored and rewritten as one value) in distinct values, per user and in all.
 */
function reactionRefused(reactions: StoredMessage['reactions'], userId: string, reaction: string): ApiError | undefined {
  const refuse = (rule: string) => new ApiError('VALIDATION_FAILED', `a message takes ${rule}`, { errors: [{ path: '/body/reaction', message: rule }] });
  if (reactions.length >= CHAT_LIMITS.reactionEntries) return refuse(`at most ${CHAT_LIMITS.reactionEntries} reactions in all`);
  if (reactions.filter((r) => r.userId === userId).length >= CHAT_LIMITS.reactionsPerUser) return refuse(`at most ${CHAT_LIMITS.reactionsPerUser} reactions per user`);
  if (!reactions.some((r) => r.reaction === reaction) && new Set(reactions.map((r) => r.reaction)).size >= CHAT_LIMITS.reactionsPerMessage) {
    return refuse(`at most ${CHAT_LIMITS.reactionsPerMessage} distinct reactions`);
  }
  return undefined;
}

/** A user's reaction added or taken back (each user holds a value once; a repeat changes nothing). */
export function reacted(m: StoredMessage, userId: string, reaction: string, add: boolean, at: string): Change {
  if (m.deletedAt) return new ApiError('MESSAGE_DELETED', 'a deleted message takes no reactions');
  const existing = m.reactions.find((r) => r.userId === userId && r.reaction === reaction);
  if (add) {
    if (existing) return unchanged(m);
    const refused = reactionRefused(m.reactions, userId, reaction);
    if (refused) return refused;
    // Time-ordered ids: the reactions route lists by (createdAt, reactionId), which is then the order added.
    const added = { reactionId: uuidv7(), userId, reaction, createdAt: at };
    return { message: { ...m, reactions: [...m.reactions, added] }, event: 'reaction.added', reaction: added };
  }
  if (!existing) return unchanged(m);
  return { message: { ...m, reactions: m.reactions.filter((r) => r !== existing) }, event: 'reaction.removed', reaction: existing };
}

/**
 * A review's change (README, "Moderation"): hidden pending review (enough flags), restored
 * (dismissed), or deleted. Not a member's write: no membership, role or mute applies.
 */
export function moderated(m: StoredMessage, outcome: 'hide' | 'restore' | 'delete', at: string): Change {
  if (m.deletedAt) return unchanged(m);
  if (outcome === 'delete') return { message: tombstone(m, at), event: 'message.deleted' };
  if (outcome === 'hide') return m.hiddenAt ? unchanged(m) : { message: { ...m, hiddenAt: at }, event: 'message.hidden' };
  if (!m.hiddenAt) return unchanged(m);
  const { hiddenAt: _, ...restored } = m;
  return { message: restored, event: 'message.restored' };
}
