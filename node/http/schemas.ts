import Type from 'typebox';
import { MENTION_WINDOW } from '../store/index.ts';
import { DisplayText } from '../../common/index.ts';
import { CHAT_LIMITS, CHAT_LIST, ChatSchema, MemberSchema, MessageSchema, PAGE, REACTION_SUMMARY, ReactionSchema, Role } from '../chat/index.ts';
import { AttachmentIds, Content, CustomDataSchema, IdempotencyKey, Mentions, MessageType, ReactionValue, SendContent } from '../chat/index.ts';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

export const Username = Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$', description: '1–64 of A–Z a–z 0–9 . _ @ -; unique per application' });
export const DisplayName = DisplayText(1, 100);
export const GroupName = DisplayText(1, 100);

export const User = Type.Object({
  userId: Uuid,
  username: Type.String(),
  displayName: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  data: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "Your application's own data, as set; absent when none" })),
});
export const RegisterUserBody = Type.Object({ username: Username, displayName: Type.Optional(DisplayName), data: Type.Optional(CustomDataSchema) }, { additionalProperties: false });
export const UpdateUserBody = Type.Object(
  { displayName: Type.Optional(DisplayName), data: Type.Optional(CustomDataSchema) },
  { additionalProperties: false, minProperties: 1, description: 'A new display name, new data (replacing the old; `{}` removes it), or both' },
);
export const SignInBody = Type.Union(
  [Type.Object({ userId: Uuid }, { additionalProperties: false }), Type.Object({ username: Username }, { additionalProperties: false })],
  { description: 'Either the user id or the username' },
);
export const UserSession = Type.Object({
  jwt: Type.String({ description: 'User JWT for `Authorization: Bearer` and the WebSocket; valid 15 minutes' }),
  refreshToken: Type.String({ description: 'Opaque; rotates on every refresh' }),
  userId: Uuid,
  expiresIn: Type.Integer({ description: 'Seconds the JWT is valid' }),
});
export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export const UserParams = Type.Object({ userId: Uuid });

export const ChatParams = Type.Object({ chatId: Uuid });
export const MemberParams = Type.Object({ chatId: Uuid, userId: Uuid });
export const MessageParams = Type.Object({ chatId: Uuid, messageId: Uuid });
export const ReactionParams = Type.Object({ chatId: Uuid, messageId: Uuid, reaction: ReactionValue });

export const CreateChatBody = Type.Union([
  Type.Object({ type: Type.Literal('direct'), userId: Uuid, data: Type.Optional(CustomDataSchema) }, { additionalProperties: false, description: "`data` is set only when the chat is created: an existing pair's chat keeps its own" }),
  Type.Object(
    { type: Type.Literal('group'), name: GroupName, memberIds: Type.Array(Uuid, { maxItems: CHAT_LIMITS.groupMembers - 1, description: 'Other members; you become the owner' }), data: Type.Optional(CustomDataSchema) },
    { additionalProperties: false },
  ),
]);
export const RenameChatBody = Type.Object(
  { name: Type.Optional(GroupName), data: Type.Optional(CustomDataSchema) },
  { additionalProperties: false, minProperties: 1, description: 'A new name (groups only), new data (replacing the old; `{}` removes it), or both' },
);
export const AddMembersBody = Type.Object(
  { userIds: Type.Array(Uuid, { minItems: 1, maxItems: 100 }), role: Type.Optional(Type.Union([Type.Literal('admin'), Type.Literal('member')])) },
  { additionalProperties: false },
);
export const SetRoleBody = Type.Object({ role: Type.Union([Type.Literal('admin'), Type.Literal('member')]) }, { additionalProperties: false });
export const ReadBody = Type.Object({ seq: Type.Integer({ minimum: 0, description: 'Newest seq read; the mark only moves forward' }) }, { additionalProperties: false });
export const ListChatsQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: CHAT_LIST.maxSize, default: CHAT_LIST.defaultSize, description: `default ${CHAT_LIST.defaultSize}, at most ${CHAT_LIST.maxSize}` })),
  cursor: Type.Optional(Type.String({ maxLength: 400, description: '`nextCursor` of the previous page' })),
});

export const GetMessagesQuery = Type.Object({
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: PAGE.maxSize, description: `default ${PAGE.defaultSize}, minimum 1, maximum ${PAGE.maxSize}` })),
  lastMessage: Type.Optional(
    Type.Union([Type.Literal(''), Uuid], { description: 'Id of the oldest message of the previous page; the page holds the messages before it. Empty or absent: start from the newest.' }),
  ),
});
export const SendBody = Type.Object(
  {
    content: SendContent,
    replyTo: Type.Optional(Uuid),
    idempotencyKey: Type.Optional(IdempotencyKey),
    attachments: Type.Optional(AttachmentIds),
    data: Type.Optional(CustomDataSchema),
    mentions: Type.Optional(Mentions),
    parentId: Type.Optional(Type.String({ format: 'uuid', description: 'A reply: the message of this chat it answers; stored in its thread, out of the chat\'s timeline (README, "Threads")' })),
    showInChat: Type.Optional(Type.Boolean({ description: "A reply shown in the chat's timeline too (with parentId only)" })),
    senderId: Type.Optional(Type.String({ format: 'uuid', description: 'With the API key only, and then required: the member the message is from' })),
    type: Type.Optional(MessageType),
  },
  { additionalProperties: false, description: 'The idempotency key may also come as the `Idempotency-Key` header' },
);
export const EditBody = Type.Object(
  { content: Type.Optional(Content), data: Type.Optional(CustomDataSchema) },
  { additionalProperties: false, minProperties: 1, description: 'New content, new data (replacing the old; `{}` removes it), or both' },
);
export const ReactBody = Type.Object({ reaction: ReactionValue }, { additionalProperties: false });

export const ReactionsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: REACTION_SUMMARY.maxPage, description: `default ${REACTION_SUMMARY.defaultPage}, minimum 1, maximum ${REACTION_SUMMARY.maxPage}` })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 80, description: '`next` of the previous page' })),
  reaction: Type.Optional(ReactionValue),
});
export const ReactionPage = Type.Object({
  reactions: Type.Array(ReactionSchema, { description: 'Oldest first' }),
  next: Type.Optional(Type.String({ description: 'Pass as `after` for the next page; absent on the last page' })),
});

export const Message = MessageSchema;
export const MessageList = Type.Object({ messages: Type.Array(Message, { description: 'Newest first' }) });
export const MessageResult = Type.Object({ message: Message });

export const ChatSummary = Type.Object({
  ...ChatSchema.properties,
  role: Role,
  readSeq: Type.Integer({ description: 'Newest seq you have read' }),
  unreadCount: Type.Integer({ description: 'lastSeq - readSeq' }),
  mentionCount: Type.Integer({ description: `Unread messages that mention you, among the chat's newest ${MENTION_WINDOW}; at most ${CHAT_LIMITS.mentionCount}` }),
  threadUnreadCount: Type.Integer({ description: 'Unread replies of the threads you follow in the chat (apart from unreadCount)' }),
  lastMessage: Type.Optional(MessageSchema),
  memberCount: Type.Integer({ description: 'How many members the chat has' }),
  peer: Type.Optional(
    Type.Object(
      { userId: Type.String({ format: 'uuid' }), username: Type.String(), displayName: Type.String() },
      { description: 'Direct chats: the other member, as its user is now' },
    ),
  ),
});
export const ChatList = Type.Object({ chats: Type.Array(ChatSummary), nextCursor: Type.Optional(Type.String()) });
export { MemberSchema };
export const MemberList = Type.Object({ members: Type.Array(MemberSchema) });
