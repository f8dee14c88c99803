import type { Static } from 'typebox';
import type { ChatSchema, MemberSchema, MessageSchema, ReactionSchema, ReplySchema } from './schemas.ts';
import type { Chat, Member, StoredMessage, StoredReaction } from '../store/index.ts';

export type ReactionView = Static<typeof ReactionSchema>;
export type ReplyView = Static<typeof ReplySchema>;
export type MessageView = Static<typeof MessageSchema>;

export const reactionView = (m: StoredMessage, r: StoredReaction): ReactionView => ({
  reactionId: r.reactionId,
  chatId: m.chatId,
  messageId: m.id,
  senderId: r.userId,
  reaction: r.reaction,
  createdAt: r.createdAt,
});

export function replyView(m: StoredMessage): ReplyView {
  const view: ReplyView = {
    chatId: m.chatId,
    timeStamp: m.createdAt,
    messageId: m.id,
    senderId: m.senderId,
    // A hidden message's content stays stored (a review may restore it) but is shown to nobody.
    content: m.hiddenAt !== undefined ? '' : m.content,
    edited: m.editedAt !== undefined,
  };
  if (m.editedAt !== undefined) view.editedAt = m.editedAt;
  return view;
}

export function messageView(m: StoredMessage, replyTo: StoredMessage | undefined): MessageView {
  const view: MessageView = { ...replyView(m), seq: m.seq, deleted: m.deletedAt !== undefined, reactions: m.reactions.map((r) => reactionView(m, r)) };
  if (m.deletedAt !== undefined) view.deletedAt = m.deletedAt;
  if (m.hiddenAt !== undefined && m.deletedAt === undefined) view.hidden = true;
  if (replyTo) view.replyTo = replyView(replyTo);
  return view;
}

export type ChatView = Static<typeof ChatSchema>;

export function chatView(c: Chat): ChatView {
  const view: ChatView = {
    chatId: c.id,
    type: c.kind,
    createdBy: c.createdBy,
    createdAt: c.createdAt,
    updatedAt: c.updatedAt,
    lastSeq: c.lastSeq,
    lastActivityAt: c.lastActivityAt,
  };
  if (c.name !== undefined) view.name = c.name;
  return view;
}

export type MemberView = Static<typeof MemberSchema>;

export const memberView = (m: Member): MemberView => ({ userId: m.userId, role: m.role, joinedAt: m.joinedAt, readSeq: m.readSeq });
