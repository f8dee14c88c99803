import Type, { type Static, type TSchema } from 'typebox';
import { AttachmentIds, Content, CustomDataSchema, Mentions, IdempotencyKey, ReactionValue, SendContent } from '../chat/index.ts';

/** Version of the WebSocket protocol; every server frame carries it as `v`. */
export const PROTOCOL_VERSION = 1;

const Uuid = Type.String({ format: 'uuid' });
const Id = Type.String({ minLength: 1, maxLength: 64, description: 'Client-chosen, 1–64 characters; the ack or error carries it back' });

/** Users one `presence.query` asks about at most. */
export const PRESENCE_QUERY_MAX = 100;

const action = <T extends string, P extends Record<string, TSchema>>(type: T, props: P, description: string) =>
  Type.Object({ type: Type.Literal(type), id: Id, ...props }, { additionalProperties: false, description });

/** Client → server actions. Each gets exactly one `ack` or `error` frame with its `id`. */
export const actionSchemas = {
  'message.send': action(
    'message.send',
    { chatId: Uuid, content: SendContent, replyTo: Type.Optional(Uuid), idempotencyKey: Type.Optional(IdempotencyKey), attachments: Type.Optional(AttachmentIds), data: Type.Optional(CustomDataSchema), mentions: Type.Optional(Mentions), parentId: Type.Optional(Uuid), showInChat: Type.Optional(Type.Boolean()) },
    'Send a message; ack `{message}` once it is durable. `content` may be empty only with `attachments` (upload ids, README "Attachments"). `data`: your application\'s own (README "Custom data").',
  ),
  'message.edit': action(
    'message.edit',
    { chatId: Uuid, messageId: Uuid, content: Type.Optional(Content), data: Type.Optional(CustomDataSchema) },
    'Edit your message: `content`, `data` (replacing it; `{}` removes it) or both, at least one; ack `{message}`.',
  ),
  'message.delete': action('message.delete', { chatId: Uuid, messageId: Uuid }, 'Delete a message (author, owner or admin); ack `{message}` (the tombstone).'),
  'reaction.add': action('reaction.add', { chatId: Uuid, messageId: Uuid, reaction: ReactionValue }, 'Add your reaction (idempotent); ack `{message}`.'),
  'reaction.remove': action('reaction.remove', { chatId: Uuid, messageId: Uuid, reaction: ReactionValue }, 'Remove your reaction (idempotent); ack `{message}`.'),
  'pin.add': action('pin.add', { chatId: Uuid, messageId: Uuid }, 'Pin a message (a group\'s owners and admins; either member of a direct chat); ack `{pin}` (the one already there when pinned before).'),
  'pin.remove': action('pin.remove', { chatId: Uuid, messageId: Uuid }, 'Unpin a message (idempotent); ack `{}`.'),
  'thread.open': action(
    'thread.open',
    { chatId: Uuid, parentId: Uuid },
    'Open a thread of one of your chats on this connection: its replies, and their edits, deletes and reactions, come to it as to a follower\'s, until `thread.close`, you leave the chat or the connection closes (README "Threads"; at most 20 open per connection: OPEN_THREAD_LIMIT_REACHED). Ack `{thread}`: your state in it, read after it opened. Reconnecting, name it in `?threads=` to have it open again and its missed replies replayed.',
  ),
  'thread.close': action('thread.close', { chatId: Uuid, parentId: Uuid }, 'Close a thread opened with `thread.open` (idempotent); ack `{}`.'),
  'read.mark': action('read.mark', { chatId: Uuid, seq: Type.Integer({ minimum: 0 }) }, 'Mark messages up to `seq` read; ack `{readSeq}`.'),
  'typing.start': action('typing.start', { chatId: Uuid }, 'Tell the other members you are typing (your own connections are not told); ack `{}`.'),
  'typing.stop': action('typing.stop', { chatId: Uuid }, 'Tell the other members you stopped typing; ack `{}`.'),
  'presence.query': action(
    'presence.query',
    { userIds: Type.Array(Uuid, { minItems: 1, maxItems: PRESENCE_QUERY_MAX, uniqueItems: true, description: `1–${PRESENCE_QUERY_MAX} users of your application` }) },
    'Which of these users are online now (a connection open on any node); ack `{online: [userId…]}`. A snapshot: later changes come as `presence.online` and `presence.offline` for users you share a chat with.',
  ),
  ping: action('ping', {}, 'Ack `{}`; for round-trip measurement.'),
} as const;

export type ActionType = keyof typeof actionSchemas;
export type Action = { [K in ActionType]: Static<(typeof actionSchemas)[K]> }[ActionType];
export const isActionType = (t: unknown): t is ActionType => typeof t === 'string' && Object.hasOwn(actionSchemas, t);

/** Close codes: the range tells the client what to do (see README, "WebSocket protocol"). */
export const closeCodes = {
  /** 4000–4099: reconnect now (with backoff), then resume. */
  SHUTDOWN: { code: 4000, reconnect: 'now', reason: 'server shutting down' },
  SLOW_CONSUMER: { code: 4001, reconnect: 'now', reason: 'too far behind; reconnect and resume' },
  UNAVAILABLE: { code: 4002, reconnect: 'now', reason: 'your chats cannot be loaded now (a backend is unavailable); reconnect and resume' },
  /** The close frame's reason also carries `retryAfter` (seconds): upgrades before then get 429. */
  /** Before `ready`: a DEMO application has DEMO_MAX_CONCURRENT_USERS users connected; the reason carries `retryAfter`. */
  USER_CEILING_REACHED: { code: 4010, reconnect: 'now', reason: 'the application has its most users connected; retry after retryAfter s' },
  IGNORED_RETRY_HINTS: { code: 4029, reconnect: 'now', reason: 'sent while told to wait; reconnect after retryAfter seconds' },
  /** 4100–4199: fix the cause, then reconnect. */
  TOKEN_EXPIRED: { code: 4100, reconnect: 'after-refresh', reason: 'user token expired; refresh it and reconnect' },
  /** 4500–4599: do not reconnect automatically. */
  USER_DELETED: { code: 4500, reconnect: 'never', reason: 'user deleted' },
  APP_DELETED: { code: 4501, reconnect: 'never', reason: 'application deleted' },
  USER_BANNED: { code: 4502, reconnect: 'never', reason: 'user banned' },
} as const;

export type CloseName = keyof typeof closeCodes;

/** Frames the server sends that are not chat or user events. */
export const controlFrameSchemas = {
  ready: Type.Object({ type: Type.Literal('ready'), connectionId: Uuid, userId: Uuid }, { description: 'First frame after the upgrade; the socket is subscribed to your chats.' }),
  ack: Type.Object({ type: Type.Literal('ack'), id: Id, result: Type.Object({}, { additionalProperties: true }) }, { description: 'The action with this `id` succeeded; `result` as listed per action.' }),
  error: Type.Object(
    {
      type: Type.Literal('error'),
      id: Type.Optional(Id),
      code: Type.String({ description: 'A code of the README error table' }),
      message: Type.String(),
      retryAfter: Type.Optional(Type.Number({ description: 'With RATE_LIMITED and UNAVAILABLE: seconds to wait before retrying' })),
    },
    { description: 'The action with this `id` failed (no `id` when the frame could not be read).' },
  ),
  'resume.gap': Type.Object(
    { type: Type.Literal('resume.gap'), chatId: Uuid, fromSeq: Type.Integer(), toSeq: Type.Integer() },
    { description: 'Too much was missed to replay: page history (getMessages) for seqs fromSeq..toSeq; live delivery continues after toSeq.' },
  ),
  resumed: Type.Object(
    {
      type: Type.Literal('resumed'),
      chats: Type.Record(
        Type.String(),
        Type.Object({
          fromSeq: Type.Integer(),
          toSeq: Type.Integer(),
          gap: Type.Boolean({ description: 'New messages were too many to replay: a `resume.gap` was sent.' }),
          toRev: Type.Integer({ description: 'The chat revision you are now up to: resume from it next time.' }),
          stale: Type.Boolean({ description: 'Changes to messages you had seen were too many to replay: reload the history you show.' }),
        }),
      ),
    },
    { description: 'Replay done for every chat named in `resume` that you are still a member of.' },
  ),
} as const;
