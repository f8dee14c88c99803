import type { ChatView, MemberView, MessageView, ReactionView } from './views.ts';

/**
 * Events a chat produces, as the realtime layer delivers them. A discriminated union on `type`;
 * every event of a chat names it, and message events carry the message's `seq`.
 */
export type ChatEvent =
  | { type: 'message.new'; chatId: string; seq: number; message: MessageView }
  | { type: 'message.edited'; chatId: string; seq: number; message: MessageView }
  | { type: 'message.deleted'; chatId: string; seq: number; message: MessageView }
  | { type: 'reaction.added'; chatId: string; seq: number; reaction: ReactionView }
  | { type: 'reaction.removed'; chatId: string; seq: number; reaction: ReactionView }
  | { type: 'typing.started'; chatId: string; userId: string }
  | { type: 'typing.stopped'; chatId: string; userId: string }
  | { type: 'read.updated'; chatId: string; userId: string; seq: number }
  | { type: 'membership.changed'; chatId: string; userId: string; change: 'added' | 'removed' | 'role'; role?: MemberView['role'] }
  | { type: 'chat.updated'; chatId: string; chat: ChatView }
  | { type: 'chat.deleted'; chatId: string };

/** Events addressed to one user rather than a chat. */
export type UserEvent = { type: 'presence.online'; userId: string } | { type: 'presence.offline'; userId: string };

export type ServerEvent = ChatEvent | UserEvent;

/**
 * Where chat events go. The realtime layer implements it: it encodes each event once per wire
 * encoding and hands it to the uWS topic of the chat. Membership changes also move subscriptions,
 * which is how a removed member stops receiving at once.
 */
export interface EventSink {
  chatEvent(appId: string, event: ChatEvent): void;
  userEvent(appId: string, userId: string, event: UserEvent): void;
  /** Subscribe or unsubscribe every live connection of `userId` to the chat. */
  membershipMoved(appId: string, chatId: string, userId: string, member: boolean): void;
}
