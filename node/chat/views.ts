import type { Chat, Member, StoredMessage, StoredReaction } from '../store/index.ts';

/** Reaction as spec §2.5 shows it. */
export interface ReactionView {
  reactionId: string;
  chatId: string;
  messageId: string;
  senderId: string;
  reaction: string;
  createdAt: string;
}

/** The replied-to message, flattened (spec §2.4: no nested replyTo or reactions). */
export interface ReplyView {
  chatId: string;
  timeStamp: string;
  messageId: string;
  senderId: string;
  content: string;
  edited: boolean;
  editedAt?: string;
}

/** Message as spec §2.4 shows it, plus `seq` and the tombstone fields. */
export interface MessageView extends ReplyView {
  seq: number;
  deleted: boolean;
  deletedAt?: string;
  replyTo?: ReplyView;
  reactions: ReactionView[];
}

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
    content: m.content,
    edited: m.editedAt !== undefined,
  };
  if (m.editedAt !== undefined) view.editedAt = m.editedAt;
  return view;
}

export function messageView(m: StoredMessage, replyTo: StoredMessage | undefined): MessageView {
  const view: MessageView = { ...replyView(m), seq: m.seq, deleted: m.deletedAt !== undefined, reactions: m.reactions.map((r) => reactionView(m, r)) };
  if (m.deletedAt !== undefined) view.deletedAt = m.deletedAt;
  if (replyTo) view.replyTo = replyView(replyTo);
  return view;
}

export interface ChatView {
  chatId: string;
  type: Chat['kind'];
  name?: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
  lastActivityAt: string;
}

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

export interface MemberView {
  userId: string;
  role: Member['role'];
  joinedAt: string;
  readSeq: number;
}

export const memberView = (m: Member): MemberView => ({ userId: m.userId, role: m.role, joinedAt: m.joinedAt, readSeq: m.readSeq });
