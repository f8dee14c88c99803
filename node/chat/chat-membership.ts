import { ApiError } from '../../common/index.ts';
import type { Chat, Member, MemberRole, NodeStore } from '../store/index.ts';
import type { ChatCap } from './chat-cap.ts';
import type { EventSink } from './events.ts';
import { CHAT_LIMITS } from './limits.ts';
import { memberView } from './views.ts';
import { changeWithEvents, type ChatWebhooks } from './change-events.ts';

/** Membership writes apply only while this node writes the chat (see ChatWriters). */
export const FENCED = Object.freeze({ fenced: true });
export const notFound = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
const rank = (role: MemberRole) => (role === 'owner' ? 0 : role === 'admin' ? 1 : 2);

/** What the membership writes of one chat use of its actor. */
export interface MembershipHost {
  readonly appId: string;
  readonly chatId: string;
  /** The actor's members: changed here once each write is stored. */
  readonly members: Map<string, Member>;
  readonly deps: { store: NodeStore; events: EventSink; now: () => Date; chatCap?: ChatCap; webhooks?: ChatWebhooks };
  chat(): Chat;
  /** The highest seq published: a new member has read up to it. */
  publishedSeq(): number;
  /** Resolves once the chat row's activity write in flight, if any, has landed. */
  activityInFlight(): Promise<void>;
  /** A member was removed (or left): what it followed in the chat's threads goes. */
  left(userId: string): Promise<void>;
}

/**
 * Who joins, leaves and holds which role in one group: the permission rules and the writes. The
 * chat's actor runs each of these in its serial queue, so they are ordered with its other writes;
 * every write is fenced (FENCED: refused unless this node holds the chat), and each change is
 * stored before the actor's members, the sockets' subscriptions and the chat's events follow it.
 */
export class ChatMembership {
  constructor(private readonly host: MembershipHost) {}

  private role(userId: string): MemberRole | undefined {
    return this.host.members.get(userId)?.role;
  }

  /** Moves the live connections of a new chat's members into its topic and tells them. */
  announce(userIds: string[]): void {
    const { appId, chatId, deps } = this.host;
    for (const userId of userIds) deps.events.membershipMoved(appId, chatId, userId, true);
    for (const userId of userIds) {
      const role = this.role(userId);
      deps.events.chatEvent(appId, { type: 'membership.changed', chatId, userId, change: 'added', ...(role ? { role } : {}) });
    }
  }

  async add(byUserId: string, userIds: string[], role: MemberRole): Promise<Member[] | ApiError> {
    const { appId, chatId, deps, members } = this.host;
    const mine = this.role(byUserId);
    if (!mine) return notFound();
    if (this.host.chat().kind === 'direct') return new ApiError('NOT_ALLOWED', 'direct chats have exactly two members');
    if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins add members');
    if (role === 'owner') return new ApiError('NOT_ALLOWED', 'a chat has one owner');
    const fresh = [...new Set(userIds)].filter((id) => !members.has(id));
    if (members.size + fresh.length > CHAT_LIMITS.groupMembers) return new ApiError('MEMBER_LIMIT_REACHED', `a group has at most ${CHAT_LIMITS.groupMembers} members`);
    for (const id of fresh) if (!(await deps.store.users.get(appId, id))) return new ApiError('USER_NOT_FOUND', `no user ${id} in this application`);
    const now = deps.now().toISOString();
    for (const id of fresh) if (await deps.store.moderation.chatBanOf(appId, chatId, id, now)) return new ApiError('MEMBER_BANNED', `user ${id} is banned from this chat until the ban is lifted or expires`);
    const full = await deps.chatCap?.check(appId, fresh);
    if (full) return full;
    const joinedAt = deps.now().toISOString();
    const added: Member[] = [];
    for (const userId of fresh) {
      const member: Member = { appId, chatId, userId, role, joinedAt, readSeq: this.host.publishedSeq() };
      const event = { type: 'member.added', data: { chatId, ...memberView(member) }, check: { kind: 'member' as const, chatId, userId, present: true } };
      await changeWithEvents(deps.webhooks, appId, [event], (events) => deps.store.chats.putMember(member, { ...FENCED, events }), () => true);
      members.set(userId, member);
      added.push(member);
      deps.events.membershipMoved(appId, chatId, userId, true);
      deps.events.chatEvent(appId, { type: 'membership.changed', chatId, userId, change: 'added', role });
    }
    if (added.length > 0) await this.counted();
    return added;
  }

  /** Removes `userId` (by an owner or admin, or the member itself: leaving). */
  async remove(byUserId: string, userId: string): Promise<true | ApiError> {
    const mine = this.role(byUserId);
    if (!mine) return notFound();
    const target = this.host.members.get(userId);
    if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
    if (this.host.chat().kind === 'direct') return new ApiError('NOT_ALLOWED', 'members cannot leave or be removed from a direct chat; delete it instead');
    if (byUserId !== userId) {
      if (mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins remove members');
      if (target.role === 'owner' || (target.role === 'admin' && mine !== 'owner')) return new ApiError('NOT_ALLOWED', 'you cannot remove this member');
    }
    await this.removeUnchecked(target, byUserId !== userId ? byUserId : undefined);
    return true as const;
  }

  /** Removes a member (the owner's leaving hands the chat on), by `removedBy` when not itself. */
  async removeUnchecked(target: Member, removedBy: string | undefined): Promise<void> {
    const { appId, chatId, deps, members } = this.host;
    const { userId } = target;
    if (target.role === 'owner' && members.size > 1) {
      // The owner leaving hands the chat to the longest-standing admin, else member.
      const heir = [...members.values()].filter((m) => m.userId !== userId).sort((a, b) => rank(a.role) - rank(b.role) || a.joinedAt.localeCompare(b.joinedAt))[0]!;
      await this.setRoleUnchecked(heir, 'owner');
    }
    const event = { type: 'member.removed', data: { chatId, userId, ...(removedBy !== undefined ? { removedBy } : {}) }, check: { kind: 'member' as const, chatId, userId, present: false } };
    await changeWithEvents(deps.webhooks, appId, [event], (events) => deps.store.chats.removeMember(appId, chatId, userId, { ...FENCED, events }), (r) => r === 'removed');
    members.delete(userId);
    // Published while the removed member is still subscribed, so it learns of its own removal;
    // unsubscribed at once after, so it receives none of the chat's later events.
    deps.events.chatEvent(appId, { type: 'membership.changed', chatId, userId, change: 'removed' });
    deps.events.membershipMoved(appId, chatId, userId, false);
    await this.counted();
    // Not awaited: it waits for the replies being written, which the queue need not. The inbox
    // leaves out chats its user is not in, so rows a failure leaves behind show nowhere.
    void this.host.left(userId).catch(() => undefined);
  }

  async setRole(byUserId: string, userId: string, role: MemberRole): Promise<Member | ApiError> {
    if (this.role(byUserId) === undefined) return notFound();
    if (this.role(byUserId) !== 'owner') return new ApiError('NOT_ALLOWED', 'only the owner changes roles');
    const target = this.host.members.get(userId);
    if (!target) return new ApiError('USER_NOT_FOUND', 'the user is not a member of this chat');
    if (role === 'owner' || target.role === 'owner') return new ApiError('NOT_ALLOWED', 'ownership moves only when the owner leaves');
    return this.setRoleUnchecked(target, role);
  }

  private async setRoleUnchecked(target: Member, role: MemberRole): Promise<Member> {
    const { appId, chatId, deps } = this.host;
    const updated = { ...target, role };
    await deps.store.chats.putMember(updated, FENCED);
    this.host.members.set(target.userId, updated);
    deps.events.chatEvent(appId, { type: 'membership.changed', chatId, userId: target.userId, change: 'role', role });
    return updated;
  }

  /**
   * The member count changed: the chat row carries it for lists read where the actor is not
   * loaded. Written now (a membership change is rare), after any activity write in flight, which
   * carries an older row; not through the activity writer, whose interval would then hold back the
   * chat's next message in chat lists.
   */
  private async counted(): Promise<void> {
    const chat = this.host.chat();
    chat.memberCount = this.host.members.size;
    await this.host.activityInFlight();
    await this.host.deps.store.chats.update(chat, FENCED);
  }
}
