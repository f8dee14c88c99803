import Type from 'typebox';
import { CHAT_LIMITS } from './limits.ts';

/**
 * The resources of a chat as they go over the wire (REST bodies and WebSocket events). The view
 * types in views.ts are derived from these, and so are the OpenAPI and WebSocket documents.
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

/** What a user writes (REST bodies and WebSocket actions alike), checked before anything else. */
export const Content = Type.String({ minLength: 1, maxLength: CHAT_LIMITS.messageChars, description: `1–${CHAT_LIMITS.messageChars} characters` });
export const ReactionValue = Type.String({ minLength: 1, maxLength: CHAT_LIMITS.reactionChars, description: `1–${CHAT_LIMITS.reactionChars} characters` });
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 64, description: '1–64 characters. Same key, same sender, same chat: the same message, never a second one' });

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);

export const ReplySchema = Type.Object(
  { chatId: Uuid, timeStamp: Timestamp, messageId: Uuid, senderId: Uuid, content: Type.String(), edited: Type.Boolean(), editedAt: Type.Optional(Timestamp) },
  { description: 'The replied-to message, flattened: no nested replyTo or reactions' },
);
export const ReactionSchema = Type.Object({ reactionId: Uuid, chatId: Uuid, messageId: Uuid, senderId: Uuid, reaction: Type.String(), createdAt: Timestamp });
export const MessageSchema = Type.Object({
  chatId: Uuid,
  timeStamp: Timestamp,
  messageId: Uuid,
  senderId: Uuid,
  content: Type.String({ description: 'Empty for a deleted message' }),
  edited: Type.Boolean(),
  editedAt: Type.Optional(Timestamp),
  replyTo: Type.Optional(ReplySchema),
  reactions: Type.Array(ReactionSchema),
  seq: Type.Integer({ description: 'Position in the chat: 1, 2, 3… with no gaps' }),
  deleted: Type.Boolean({ description: 'Tombstone: the message was deleted; content is empty, reactions are gone' }),
  deletedAt: Type.Optional(Timestamp),
  hidden: Type.Optional(Type.Literal(true, { description: 'Hidden pending review (enough members flagged it): content is empty until a review restores it' })),
});
export const ChatSchema = Type.Object({
  chatId: Uuid,
  type: Type.Union([Type.Literal('direct'), Type.Literal('group')]),
  name: Type.Optional(Type.String()),
  createdBy: Uuid,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastSeq: Type.Integer(),
  lastActivityAt: Timestamp,
});
export const MemberSchema = Type.Object({ userId: Uuid, role: Role, joinedAt: Timestamp, readSeq: Type.Integer() });
