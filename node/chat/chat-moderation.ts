import Type, { type Static } from 'typebox';
import { ApiError } from '../../common/index.ts';
import type { ChatBan, ChatKind, Member, MemberMute, MemberRole } from '../store/index.ts';

/**
 * Mutes and bans within one chat (README, "Moderation"): who may impose them, and what a mute
 * refuses. The chat's actor applies them; this module holds the rules, so they read in one place.
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

/** The refusal of a muted member's send, edit, reaction or typing. */
export function mutedRefusal(member: Member | undefined, now: Date): ApiError | undefined {
  const mute = muteInForce(member, now);
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
