import type { ActivityPosition, Chat, ChatStore, EventOptions, Member, WriteOptions } from '../types.ts';
import { END, values, type EventSink, type Tables } from './shared.ts';
import type { LmdbWriters } from './writers.ts';

/**
 * Keys: ['c', app, chat] → chat; ['m', app, chat, user] → member (partition: the chat's members);
 * ['uc', app, user, chat] → the chat's activity time in the user's index (partition: a user's
 * chats); ['ua', app, user, at, chat] → true (the activity index, read in reverse: newest first);
 * ['un', app, user] → how many chats the user is in; ['d', app, lowId, highId] → chat id. The
 * three user keys change in the same transaction as the member, so they never disagree. Webhook
 * events (EventOptions) are written in the transaction of their change, once it is sure to apply.
 */
export class LmdbChats implements ChatStore {
  constructor(
    private readonly t: Tables,
    private readonly writers: LmdbWriters,
    private readonly events: EventSink,
  ) {}

  /** Inside a write transaction: a fenced write holds the chat or throws FencedError. */
  private fence(appId: string, chatId: string, options?: WriteOptions): void {
    if (options?.fenced) this.writers.take(appId, chatId);
  }

  /** Inside a write transaction: puts members, indexing new ones at `at` (their chat's activity). */
  private writeMembers(members: Member[], at: string): void {
    for (const m of members) {
      this.t.db.put(['m', m.appId, m.chatId, m.userId], m);
      if (this.t.db.get(['uc', m.appId, m.userId, m.chatId]) !== undefined) continue;
      this.t.db.put(['uc', m.appId, m.userId, m.chatId], at);
      this.t.db.put(['ua', m.appId, m.userId, at, m.chatId], true);
      this.t.db.put(['un', m.appId, m.userId], this.count(m.appId, m.userId) + 1);
    }
  }

  /** Inside a write transaction: takes the chat out of the user's keys. */
  private unindex(appId: string, userId: string, chatId: string): void {
    const at = this.t.db.get(['uc', appId, userId, chatId]);
    if (at === undefined) return;
    this.t.db.remove(['uc', appId, userId, chatId]);
    if (typeof at === 'string') this.t.db.remove(['ua', appId, userId, at, chatId]);
    this.t.db.put(['un', appId, userId], Math.max(0, this.count(appId, userId) - 1));
  }

  private count(appId: string, userId: string): number {
    return (this.t.db.get(['un', appId, userId]) as number | undefined) ?? 0;
  }

  /**
   * Indexes memberships stored before the activity index existed (their 'uc' value was `true`),
   * once: run when the store opens. One transaction, so a crash midway leaves the old state.
   */
  upgrade(): void {
    if (this.t.db.get(['meta', 'activity-index']) !== undefined) return;
    this.t.root.transactionSync(() => {
      const legacy: [string, string, string][] = [];
      for (const { key, value } of this.t.db.getRange({ start: ['uc'], end: ['uc', END] })) if (value === true) legacy.push([String(key[1]), String(key[2]), String(key[3])]);
      for (const [appId, userId, chatId] of legacy) {
        const chat = this.t.db.get(['c', appId, chatId]) as Chat | undefined;
        this.t.db.remove(['uc', appId, userId, chatId]);
        if (!chat) continue;
        this.t.db.put(['uc', appId, userId, chatId], chat.lastActivityAt);
        this.t.db.put(['ua', appId, userId, chat.lastActivityAt, chatId], true);
        this.t.db.put(['un', appId, userId], this.count(appId, userId) + 1);
      }
      this.t.db.put(['meta', 'activity-index'], 1);
    });
  }

  async create(chat: Chat, members: Member[], options?: EventOptions): Promise<void> {
    await this.t.root.transaction(() => {
      this.t.db.put(['c', chat.appId, chat.id], chat);
      this.writeMembers(members, chat.lastActivityAt);
      this.events(options?.events);
    });
  }

  ensureDirect(chat: Chat, members: [Member, Member], options?: EventOptions): Promise<{ chat: Chat; created: boolean }> {
    const [a, b] = [members[0].userId, members[1].userId].sort() as [string, string];
    return this.t.root.transaction(() => {
      const existingId = this.t.db.get(['d', chat.appId, a, b]) as string | undefined;
      const existing = existingId === undefined ? undefined : (this.t.db.get(['c', chat.appId, existingId]) as Chat | undefined);
      if (existing) return { chat: existing, created: false };
      this.t.db.put(['d', chat.appId, a, b], chat.id);
      this.t.db.put(['c', chat.appId, chat.id], chat);
      this.writeMembers(members, chat.lastActivityAt);
      this.events(options?.events);
      return { chat, created: true };
    });
  }

  async get(appId: string, chatId: string): Promise<Chat | undefined> {
    return this.t.db.get(['c', appId, chatId]) as Chat | undefined;
  }

  update(chat: Chat, options?: WriteOptions): Promise<'updated' | 'not-found'> {
    return this.t.root.transaction(() => {
      this.fence(chat.appId, chat.id, options);
      if (this.t.db.get(['c', chat.appId, chat.id]) === undefined) return 'not-found' as const;
      this.t.db.put(['c', chat.appId, chat.id], chat);
      this.events(options?.events);
      return 'updated' as const;
    });
  }

  delete(appId: string, chatId: string, options?: EventOptions): Promise<'deleted' | 'not-found'> {
    return this.t.root.transaction(() => {
      const chat = this.t.db.get(['c', appId, chatId]) as Chat | undefined;
      if (!chat) return 'not-found' as const;
      const members = [...values<Member>(this.t.db, ['m', appId, chatId])];
      for (const m of members) {
        this.t.db.remove(['m', appId, chatId, m.userId]);
        this.unindex(appId, m.userId, chatId);
      }
      if (chat.kind === 'direct' && members.length === 2) {
        const [a, b] = members.map((m) => m.userId).sort() as [string, string];
        this.t.db.remove(['d', appId, a, b]);
      }
      this.t.db.remove(['c', appId, chatId]);
      this.events(options?.events);
      return 'deleted' as const;
    });
  }

  async members(appId: string, chatId: string): Promise<Member[]> {
    return [...values<Member>(this.t.db, ['m', appId, chatId])];
  }

  async member(appId: string, chatId: string, userId: string): Promise<Member | undefined> {
    return this.t.db.get(['m', appId, chatId, userId]) as Member | undefined;
  }

  async putMember(member: Member, options?: WriteOptions): Promise<void> {
    await this.t.root.transaction(() => {
      this.fence(member.appId, member.chatId, options);
      const current = this.t.db.get(['m', member.appId, member.chatId, member.userId]) as Member | undefined;
      const chat = this.t.db.get(['c', member.appId, member.chatId]) as Chat | undefined;
      this.writeMembers([current ? { ...member, joinedAt: current.joinedAt, readSeq: Math.max(current.readSeq, member.readSeq) } : member], chat?.lastActivityAt ?? member.joinedAt);
      this.events(options?.events);
    });
  }

  removeMember(appId: string, chatId: string, userId: string, options?: WriteOptions): Promise<'removed' | 'not-found'> {
    return this.t.root.transaction(() => {
      this.fence(appId, chatId, options);
      if (this.t.db.get(['m', appId, chatId, userId]) === undefined) return 'not-found' as const;
      this.t.db.remove(['m', appId, chatId, userId]);
      this.unindex(appId, userId, chatId);
      this.events(options?.events);
      return 'removed' as const;
    });
  }

  async chatsOf(appId: string, userId: string): Promise<string[]> {
    const ids: string[] = [];
    for (const key of this.t.db.getKeys({ start: ['uc', appId, userId], end: ['uc', appId, userId, END] })) ids.push(String(key[3]));
    return ids;
  }

  async chatsByActivity(appId: string, userId: string, after: ActivityPosition | undefined, limit: number): Promise<ActivityPosition[]> {
    const prefix = ['ua', appId, userId];
    const start = after ? [...prefix, after.at, after.chatId] : [...prefix, END];
    const found: ActivityPosition[] = [];
    for (const key of this.t.db.getKeys({ start, end: prefix, reverse: true })) {
      const position = { at: String(key[3]), chatId: String(key[4]) };
      if (after && position.at === after.at && position.chatId === after.chatId) continue;
      found.push(position);
      if (found.length >= limit) break;
    }
    return found;
  }

  writeActivity(chat: Chat, userIds: string[]): Promise<'updated' | 'not-found'> {
    return this.t.root.transaction(() => {
      if (this.t.db.get(['c', chat.appId, chat.id]) === undefined) return 'not-found' as const;
      this.t.db.put(['c', chat.appId, chat.id], chat);
      const at = chat.lastActivityAt;
      for (const userId of userIds) {
        const was = this.t.db.get(['uc', chat.appId, userId, chat.id]);
        // Not a member (removed meanwhile), or already at this time or later: nothing to move.
        if (typeof was !== 'string' || was >= at) continue;
        this.t.db.remove(['ua', chat.appId, userId, was, chat.id]);
        this.t.db.put(['ua', chat.appId, userId, at, chat.id], true);
        this.t.db.put(['uc', chat.appId, userId, chat.id], at);
      }
      return 'updated' as const;
    });
  }

  async chatCounts(appId: string, userIds: string[]): Promise<Map<string, number>> {
    return new Map(userIds.map((id) => [id, this.count(appId, id)]));
  }

  recountChats(appId: string, userId: string): Promise<number> {
    return this.t.root.transaction(() => {
      const n = this.t.db.getKeysCount({ start: ['uc', appId, userId], end: ['uc', appId, userId, END] });
      this.t.db.put(['un', appId, userId], n);
      return n;
    });
  }

  markRead(appId: string, chatId: string, userId: string, seq: number): Promise<number | undefined> {
    return this.t.root.transaction(() => {
      const member = this.t.db.get(['m', appId, chatId, userId]) as Member | undefined;
      if (!member) return undefined;
      if (seq > member.readSeq) this.t.db.put(['m', appId, chatId, userId], { ...member, readSeq: seq });
      return Math.max(seq, member.readSeq);
    });
  }

  async writeReadMarks(appId: string, chatId: string, marks: ReadonlyArray<{ userId: string; seq: number }>): Promise<void> {
    if (marks.length === 0) return;
    await this.t.root.transaction(() => {
      for (const { userId, seq } of marks) {
        const member = this.t.db.get(['m', appId, chatId, userId]) as Member | undefined;
        if (member && seq > member.readSeq) this.t.db.put(['m', appId, chatId, userId], { ...member, readSeq: seq });
      }
    });
  }
}
