import Type from 'typebox';
import { ApiError } from '../../common/index.ts';
import { CHAT_LIMITS } from './limits.ts';

/**
 * The resources of a chat as they go over the wire (REST bodies and WebSocket events). The view
 * types in views.ts are derived from these, and so are the OpenAPI and WebSocket documents.
 */
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

/** What a user writes (REST bodies and WebSocket actions alike), checked before anything else. */
export const Content = Type.String({ minLength: 1, maxLength: CHAT_LIMITS.messageChars, description: `1–${CHAT_LIMITS.messageChars} characters` });
/** A send's content: empty only when the send carries attachments (checked by sendProblem). */
export const SendContent = Type.String({ maxLength: CHAT_LIMITS.messageChars, description: `0–${CHAT_LIMITS.messageChars} characters: at least 1 unless the message carries attachments` });
/**
 * The one rule a send's schema cannot say: content may be empty only with attachments. The
 * problem names the field under `prefix` (`/body` for REST, `` for a WebSocket frame).
 */
export function emptySendProblem(input: { content: string; attachments?: readonly string[] | undefined }, prefix: string): ApiError | undefined {
  if (input.content.length > 0 || (input.attachments?.length ?? 0) > 0) return undefined;
  return ApiError.field('VALIDATION_FAILED', `${prefix}/content`, 'must not be empty unless the message carries attachments');
}

export const AttachmentIds = Type.Array(Uuid, {
  minItems: 1,
  maxItems: CHAT_LIMITS.attachments,
  uniqueItems: true,
  description: `1–${CHAT_LIMITS.attachments} distinct upload ids, each finalized by the sender in this chat and sent in no other message (README, "Attachments")`,
});
export const Mentions = Type.Array(Uuid, {
  minItems: 1,
  maxItems: CHAT_LIMITS.mentions,
  uniqueItems: true,
  description: `1–${CHAT_LIMITS.mentions} distinct members the message is for: each gets it counted in its chat's mentionCount until read`,
});
export const ReactionValue = Type.String({ minLength: 1, maxLength: CHAT_LIMITS.reactionChars, description: `1–${CHAT_LIMITS.reactionChars} characters` });
export const IdempotencyKey = Type.String({ minLength: 1, maxLength: 64, description: '1–64 characters. Same key, same sender, same chat: the same message, never a second one' });

export const Role = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);

export const ReplySchema = Type.Object(
  { chatId: Uuid, timeStamp: Timestamp, messageId: Uuid, senderId: Uuid, content: Type.String(), edited: Type.Boolean(), editedAt: Type.Optional(Timestamp) },
  { description: 'The replied-to message, flattened: no nested replyTo or reactions' },
);
export const ReactionSchema = Type.Object({ reactionId: Uuid, chatId: Uuid, messageId: Uuid, senderId: Uuid, reaction: Type.String(), createdAt: Timestamp });
export const AttachmentSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  size: Type.Integer({ description: 'Bytes of the stored file (an image after its metadata was stripped)' }),
  type: Type.String({ description: 'The type sniffed from the bytes' }),
  width: Type.Optional(Type.Integer()),
  height: Type.Optional(Type.Integer()),
  placeholder: Type.Optional(Type.String({ description: 'A ThumbHash of an image, base64: draw it while the thumbnail loads' })),
  thumbnail: Type.Optional(Type.Object({ width: Type.Integer(), height: Type.Integer(), type: Type.Literal('image/webp') })),
}, { description: 'A file of a message: metadata only; members get its URLs from GET /api/chats/{chatId}/attachments/{id}' });
export const ThreadSummarySchema = Type.Object(
  {
    replyCount: Type.Integer({ description: 'Replies sent (a deleted one stays as a tombstone and counts)' }),
    lastReplyAt: Timestamp,
    participants: Type.Array(Uuid, { description: 'The first five who replied, in that order' }),
  },
  { description: "On a message with replies: its thread's summary" },
);
export const MessageType = Type.Union([Type.Literal('regular'), Type.Literal('system')], { description: '`system`: a notice your backend sent with its API key (members cannot send one)' });
export const MessageSchema = Type.Object({
  chatId: Uuid,
  timeStamp: Timestamp,
  messageId: Uuid,
  senderId: Uuid,
  content: Type.String({ description: 'Empty for a deleted message' }),
  edited: Type.Boolean(),
  editedAt: Type.Optional(Timestamp),
  replyTo: Type.Optional(ReplySchema),
  reactions: Type.Array(ReactionSchema, { description: 'The latest 10 reactions, oldest first; the full list pages from GET /api/messages/{chatId}/{messageId}/reactions' }),
  reactionCounts: Type.Record(Type.String(), Type.Integer({ minimum: 1 }), { description: 'How many reactions of each value, over all of them (at most 100 values)' }),
  ownReactions: Type.Optional(Type.Array(Type.String(), { description: "The values you reacted with: in answers to you (history, your write's answer), never in events, which every member shares" })),
  seq: Type.Integer({ description: 'Position in the chat: 1, 2, 3… with no gaps' }),
  deleted: Type.Boolean({ description: 'Tombstone: the message was deleted; content is empty, reactions are gone' }),
  deletedAt: Type.Optional(Timestamp),
  hidden: Type.Optional(Type.Literal(true, { description: 'Hidden pending review (enough members flagged it): content is empty until a review restores it' })),
  attachments: Type.Optional(Type.Array(AttachmentSchema, { description: 'Files sent with the message; absent when it has none, and on a deleted or hidden message' })),
  type: MessageType,
  parentId: Type.Optional(Uuid),
  showInChat: Type.Optional(Type.Literal(true, { description: "A reply shown in the chat's timeline too: the same message in both (its seq is its place in the list it is read from)" })),
  thread: Type.Optional(ThreadSummarySchema),
  mentions: Type.Optional(Type.Array(Uuid, { description: 'The members it mentions; absent when none, and on a deleted message' })),
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Your application's own data, as sent; absent when none, and on a deleted or hidden message" })),
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
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Your application's own data, as set; absent when none" })),
});
export const MemberSchema = Type.Object({ userId: Uuid, role: Role, joinedAt: Timestamp, readSeq: Type.Integer() });
