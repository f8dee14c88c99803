import Type, { type Static } from 'typebox';
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../common/index.ts';
import type { ChatBan, ChatKind, Member, MemberMute, MemberRole, NodeStore } from '../store/index.ts';
import type { EventSink } from './events.ts';
import type { ChatWebhooks } from './change-events.ts';

/**
 * Mutes and bans within one chat (README, "Moderation"): who may impose them, what a mute refuses,
 * and how each is applied. The chat's actor runs them in its order (ChatActor.moderate), so they
 * are serialized with the chat's other writes and fenced like its membership writes.
 */

/** Who moderates a chat: the backend (API key), or a member (a group's owner or admin). */
export type Moderator = { kind: 'backend'; keyId: string } | { kind: 'user'; userId: string };

/** One moderation of a chat, as its actor runs it. `expiresAt` and `reason` are checked by the route. */
export type ChatModeration =
  | { kind: 'mute'; userId: string; expiresAt?: string }
  | { kind: 'unmute'; userId: string }
  | { kind: 'ban'; userId: string; expiresAt?: string; reason?: string }
  | { kind: 'unban'; userId: string };

/** `apiKey:<keyId>` or `user:<userId>`, as mutes, bans and the moderation log record who acted. */
export const byOf = (m: Moderator) => (m.kind === 'backend' ? `apiKey:${m.keyId}` : `user:${m.userId}`);

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const By = Type.String({ description: '`apiKey:<keyId>` (the backend) or `user:<userId>` (an owner or admin)' });
export const MuteSchema = Type.Object({ chatId: Uuid, userId: Uuid, expiresAt: Type.Optional(Timestamp), mutedBy: By, mutedAt: Timestamp });
export const ChatBanSchema = Type.Object({ chatId: Uuid, userId: Uuid, reason: Type.Optional(Type.String()), expiresAt: Type.Optional(Timestamp), bannedBy: By, createdAt: Timestamp });
export type MuteView = Static<typeof MuteSchema>;
export type ChatBanView = Static<typeof ChatBanSchema>;

export const muteView = (m: Member & { mute: MemberMute }): MuteView => ({ chatId: m.chatId, userId: m.userId, ...(m.mute.until !== undefined ? { expiresAt: m.mute.until } : {}), mutedBy: m.mute.by, mutedAt: m.mute.at });
export const chatBanView = (b: ChatBan): ChatBanView => ({ chatId: b.chatId, userId: b.userId, ...(b.reason !== undefined ? { reason: b.reason } : {}), ...(b.expiresAt !== undefined ? { expiresAt: b.expiresAt } : {}), bannedBy: b.by, createdAt: b.createdAt });

/** The member's mute if it is in force at `now` (an expired mute lifts by itself: nothing is written). */
export function muteInForce(member: Member | undefined, now: Date): MemberMute | undefined {
  const mute = member?.mute;
  return mute && (mute.until === undefined || mute.until > now.toISOString()) ? mute : undefined;
}

/** The refusal of a muted member's send, edit, reaction or typing (the clock is read only for a member with a mute). */
export function mutedRefusal(member: Member | undefined, now: () => Date): ApiError | undefined {
  if (!member?.mute) return undefined;
  const mute = muteInForce(member, now());
  if (!mute) return undefined;
  return new ApiError('USER_MUTED', mute.until ? `you are muted in this chat until ${mute.until}` : 'you are muted in this chat until a moderator lifts it');
}

const rank = (role: MemberRole) => (role === 'owner' ? 0 : role === 'admin' ? 1 : 2);

/**
 * Whether `by` may mute or ban `userId` (a member, or for a ban also a non-member: banned ahead):
 * the backend may act on anyone; in a group, an owner on anyone else, an admin on plain members
 * and non-members; nobody on itself. Direct chats take mutes from the backend only and no bans
 * (their members cannot be removed: a user blocks the other, or the backend bans it app-wide).
 */
export function moderationRefusal(kind: ChatKind, members: ReadonlyMap<string, Member>, by: Moderator, change: ChatModeration): ApiError | undefined {
  const ban = change.kind === 'ban' || change.kind === 'unban';
  if (kind === 'direct' && ban) return new ApiError('NOT_ALLOWED', 'a direct chat has no bans: block the user, or ban it from the application');
  if (by.kind === 'backend') return undefined;
  const mine = members.get(by.userId)?.role;
  if (kind === 'direct' || mine === undefined || mine === 'member') return new ApiError('NOT_ALLOWED', 'only a group’s owner and admins mute and ban its members');
  if (by.userId === change.userId) return new ApiError('NOT_ALLOWED', 'you cannot mute or ban yourself');
  const target = members.get(change.userId)?.role ?? 'member';
  if (rank(target) <= rank(mine)) return new ApiError('NOT_ALLOWED', `a${mine === 'admin' ? 'n admin' : 'n owner'} cannot mute or ban a member of its role or above`);
  return undefined;
}

/** What applying a moderation needs of the chat's actor. */
export interface ModeratedChat {
  appId: string;
  chatId: string;
  kind: ChatKind;
  /** The actor's members, updated in place. */
  members: Map<string, Member>;
  deps: { store: NodeStore; events: EventSink; now: () => Date; webhooks?: ChatWebhooks };
  /** A fenced write of a member. */
  putMember(member: Member): Promise<void>;
  /** Removes a member as a removal by `removedBy` (undefined: the backend) does. */
  remove(target: Member, removedBy: string | undefined): Promise<void>;
}

/**
 * Applies a mute, unmute, ban or unban. Each is recorded in the moderation log before it is made
 * (no change exists unrecorded). A mute is written with the member, so the actor checks it on
 * every send from memory. A ban is recorded and stored first, then the member, if it is one, is
 * removed: a crash between leaves it banned and a member, which a second ban completes. Each is
 * announced to the chat (a banned member hears it before its removal), then to webhooks, before
 * the answer.
 */
export async function applyModeration(c: ModeratedChat, by: Moderator, change: ChatModeration): Promise<MuteView | ChatBanView | true | ApiError> {
  const refused = moderationRefusal(c.kind, c.members, by, change);
  if (refused) return refused;
  const { store, events, webhooks } = c.deps;
  const now = c.deps.now();
  const at = now.toISOString();
  const target = c.members.get(change.userId);
  const action = { appId: c.appId, id: uuidv7(), at, userId: change.userId, chatId: c.chatId, by: byOf(by) };
  const expiry = (expiresAt: string | undefined) => (expiresAt !== undefined ? { expiresAt } : {});
  const announce = async (type: 'member.muted' | 'member.unmuted' | 'member.banned' | 'member.unbanned', expiresAt?: string, extra: Record<string, unknown> = {}) => {
    events.chatEvent(c.appId, { type, chatId: c.chatId, userId: change.userId, ...expiry(expiresAt) });
    await webhooks?.emit(c.appId, [{ type, data: { chatId: c.chatId, userId: change.userId, ...expiry(expiresAt), ...extra, by: action.by } }]);
  };
  switch (change.kind) {
    case 'mute': {
      if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
      const muted = { ...target, mute: { ...(change.expiresAt !== undefined ? { until: change.expiresAt } : {}), by: action.by, at } };
      await store.moderation.log({ ...action, action: 'member.muted', ...expiry(change.expiresAt) });
      await c.putMember(muted);
      c.members.set(target.userId, muted);
      await announce('member.muted', change.expiresAt);
      return muteView(muted);
    }
    case 'unmute': {
      if (!target || !muteInForce(target, now)) return new ApiError('MUTE_NOT_FOUND', 'this member has no mute in force');
      const { mute: _, ...unmuted } = target;
      await store.moderation.log({ ...action, action: 'member.unmuted' });
      await c.putMember(unmuted);
      c.members.set(target.userId, unmuted);
      await announce('member.unmuted');
      return true;
    }
    case 'ban': {
      if (!target && !(await store.users.get(c.appId, change.userId))) return new ApiError('USER_NOT_FOUND', `no user ${change.userId} in this application`);
      const reason = change.reason !== undefined ? { reason: change.reason } : {};
      const ban: ChatBan = { appId: c.appId, chatId: c.chatId, userId: change.userId, ...reason, ...expiry(change.expiresAt), createdAt: at, by: action.by };
      await store.moderation.chatBan(ban, { ...action, action: 'member.banned', ...reason, ...expiry(change.expiresAt) });
      await announce('member.banned', change.expiresAt, reason);
      if (target) await c.remove(target, by.kind === 'user' ? by.userId : undefined);
      return chatBanView(ban);
    }
    case 'unban': {
      if ((await store.moderation.liftChatBan(c.appId, c.chatId, change.userId, { ...action, action: 'member.unbanned' }, at)) === 'not-banned') return new ApiError('BAN_NOT_FOUND', 'this user has no ban from this chat in force');
      await announce('member.unbanned');
      return true;
    }
  }
}

/**
 * Whether `by` may see a chat's mutes and bans: null when it may; undefined when it is not a
 * member (it does not see the chat); NOT_ALLOWED for a plain member.
 */
export function listRefusal(members: ReadonlyMap<string, Member>, by: Moderator): ApiError | undefined | null {
  if (by.kind === 'backend') return null;
  const role = members.get(by.userId)?.role;
  if (role === undefined) return undefined;
  return role === 'member' ? new ApiError('NOT_ALLOWED', 'only a chat’s owner and admins see its mutes and bans') : null;
}

/**
 * The members muted at `now` (an expired mute is not listed), for the backend and the chat's
 * owner and admins; undefined when `by` is not a member (it does not see the chat).
 */
export function mutesOf(members: ReadonlyMap<string, Member>, by: Moderator, now: Date): MuteView[] | ApiError | undefined {
  const refused = listRefusal(members, by);
  if (refused !== null) return refused;
  return [...members.values()].flatMap((m) => (m.mute && muteInForce(m, now) ? [muteView(m as Member & { mute: MemberMute })] : []));
}
