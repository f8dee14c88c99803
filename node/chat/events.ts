import Type, { type Static, type TSchema } from 'typebox';
import { ChatSchema, MessageSchema, ReactionSchema, Role, ThreadSummarySchema } from './schemas.ts';
import { PinSchema } from './chat-pins.ts';

const Uuid = Type.String({ format: 'uuid' });
const event = <T extends string, P extends Record<string, TSchema>>(type: T, props: P, description: string) =>
  Type.Object({ type: Type.Literal(type), ...props }, { description });

const Rev = Type.Integer({ description: "The chat's revision of this write; resume from the highest one seen." });

/**
 * Events a chat produces, as the realtime layer delivers them to the chat's members: a
 * discriminated union on `type`. Message and reaction events carry the message's `seq` and the
 * chat's revision `rev` of the write.
 */
export const chatEventSchemas = {
  'message.new': event(
    'message.new',
    { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema, replay: Type.Optional(Type.Literal(true)) },
    'A message was sent (or, with `replay`, is replayed after a reconnect, in its current state).',
  ),
  'message.edited': event('message.edited', { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema }, 'A message was edited; `message` is its new state.'),
  'message.deleted': event('message.deleted', { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema }, 'A message was deleted; `message` is the tombstone.'),
  'message.updated': event(
    'message.updated',
    { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema, replay: Type.Literal(true) },
    'Replayed after a reconnect: a message you had already seen changed (edit, delete, reactions) while you were away; `message` is its current state.',
  ),
  'message.hidden': event(
    'message.hidden',
    { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema },
    'Enough members flagged a message that it is hidden pending review: `message` has `hidden` and no content.',
  ),
  'message.restored': event('message.restored', { chatId: Uuid, seq: Type.Integer(), rev: Rev, message: MessageSchema }, 'A review dismissed the flags of a hidden message: `message` has its content again.'),
  'reaction.added': event('reaction.added', { chatId: Uuid, seq: Type.Integer(), rev: Rev, reaction: ReactionSchema }, 'A reaction was added to the message with `seq`.'),
  'reaction.removed': event('reaction.removed', { chatId: Uuid, seq: Type.Integer(), rev: Rev, reaction: ReactionSchema }, 'A reaction was removed.'),
  'typing.started': event('typing.started', { chatId: Uuid, userId: Uuid }, 'Another member started typing (not stored; a member is not told of its own typing, on any of its connections).'),
  'typing.stopped': event('typing.stopped', { chatId: Uuid, userId: Uuid }, 'Another member stopped typing.'),
  'read.updated': event('read.updated', { chatId: Uuid, userId: Uuid, seq: Type.Integer() }, 'A member’s read mark moved to `seq`.'),
  'membership.changed': event(
    'membership.changed',
    { chatId: Uuid, userId: Uuid, change: Type.Union([Type.Literal('added'), Type.Literal('removed'), Type.Literal('role')]), role: Type.Optional(Role) },
    'A member joined, left or was removed, or changed role. A new chat announces each of its members this way.',
  ),
  'member.muted': event(
    'member.muted',
    { chatId: Uuid, userId: Uuid, expiresAt: Type.Optional(Type.String({ format: 'date-time' })) },
    'A member was muted: it still reads and receives, but its sends, edits, reactions and typing are refused (USER_MUTED) until `expiresAt` (absent: until unmuted). The lift at `expiresAt` is not announced.',
  ),
  'member.unmuted': event('member.unmuted', { chatId: Uuid, userId: Uuid }, 'A member’s mute was lifted.'),
  'member.banned': event(
    'member.banned',
    { chatId: Uuid, userId: Uuid, expiresAt: Type.Optional(Type.String({ format: 'date-time' })) },
    'A user was banned from the chat until `expiresAt` (absent: until lifted); a member is removed next (`membership.changed`), and nobody can add it back meanwhile (MEMBER_BANNED).',
  ),
  'member.unbanned': event('member.unbanned', { chatId: Uuid, userId: Uuid }, 'A user’s ban from the chat was lifted (it can be added again).'),
  'chat.updated': event('chat.updated', { chatId: Uuid, chat: ChatSchema }, "A group was renamed, or a chat's data changed."),
  'thread.updated': event(
    'thread.updated',
    { chatId: Uuid, seq: Type.Integer({ description: "The parent's seq" }), rev: Rev, parentId: Uuid, thread: ThreadSummarySchema },
    "A message's thread changed (a reply was sent or changed): its summary now, to every member. The reply event that follows it (to followers and to connections that have the thread open) has this `rev` or a later one: count this one toward the revision you resume from only with that event (a client that resumes from it would not be replayed the reply); likewise a `message.new` of a reply shown in the chat (with `parentId`). Replayed after a reconnect as the parent's `message.updated`.",
  ),
  'thread.reply': event(
    'thread.reply',
    { chatId: Uuid, parentId: Uuid, seq: Type.Integer({ description: 'The reply’s place in its thread' }), rev: Rev, message: MessageSchema, replay: Type.Optional(Type.Literal(true)) },
    'A reply was sent in a thread you follow or have open on this connection (`thread.open`; README, "Threads"); the chat\'s other members get only `thread.updated`. `seq` is its place in the thread, not in the chat. A reply\'s edit, delete, reactions and moderation come the same way, to the same members, as `message.edited`, `message.deleted`, `reaction.added`… whose message has `parentId`. With `replay`: a reply sent or changed while you were away, replayed after a reconnect in its current state (once each).',
  ),
  'message.pinned': event('message.pinned', { chatId: Uuid, pin: PinSchema }, 'A message was pinned (README, "Pins").'),
  'message.unpinned': event('message.unpinned', { chatId: Uuid, messageId: Uuid, unpinnedBy: Type.Optional(Uuid) }, 'A message was unpinned; without `unpinnedBy`, because it was deleted.'),
  'chat.deleted': event('chat.deleted', { chatId: Uuid }, 'The chat was deleted.'),
} as const;

/** Events addressed to a user rather than a chat. */
export const userEventSchemas = {
  'presence.online': event('presence.online', { userId: Uuid }, 'A user you share a chat with came online (first connection).'),
  'presence.offline': event('presence.offline', { userId: Uuid }, 'A user you share a chat with went offline (last connection closed).'),
  'thread.read': event('thread.read', { chatId: Uuid, parentId: Uuid, seq: Type.Integer({ description: 'Your read mark in the thread now' }) }, 'You read a thread up to `seq` (on this or another connection).'),
} as const;

type Values<T> = T[keyof T];
export type ChatEvent = Static<Values<typeof chatEventSchemas>>;
export type UserEvent = Static<Values<typeof userEventSchemas>>;
export type ServerEvent = ChatEvent | UserEvent;

/**
 * Where chat events go. The realtime layer implements it: it encodes each event once per wire
 * encoding and hands it to the uWS topic of the chat. Membership changes also move subscriptions,
 * which is how a removed member stops receiving at once.
 *
 * The contract, both ways: a chat's actor calls `chatEvent` synchronously, once per event, per chat
 * in seq (and revision) order, and only after the write the event reports is durable; an
 * implementation must not throw, and must deliver a chat's events in the order it was given them.
 */
export interface EventSink {
  /**
   * `messageText`, when given, is `JSON.stringify(event.message)`, made once (message-json.ts)
   * and shared with the webhook event and the writer's acknowledgement: a JSON frame puts it in
   * rather than serialising the message again.
   */
  chatEvent(appId: string, event: ChatEvent, messageText?: string): void;
  /**
   * An event of one thread (a reply, or a change of one): delivered, once per connection, to the
   * connections of `followers` that are in the chat and to every connection that has the thread
   * open (README, "Threads"); the chat's other members do not get it. Same contract as
   * `chatEvent`, in order with the chat's events; its revision is that of the chat event before it
   * (the parent's summary), which it shares.
   */
  threadEvent(appId: string, parentId: string, followers: readonly string[], event: ChatEvent, messageText?: string): void;
  userEvent(appId: string, userId: string, event: UserEvent): void;
  /** Subscribe or unsubscribe every live connection of `userId` to the chat. */
  membershipMoved(appId: string, chatId: string, userId: string, member: boolean): void;
}
