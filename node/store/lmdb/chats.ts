import type { Chat, ChatStore, Member, WriteOptions } from '../types.ts';
import { END, values, type Tables } from './shared.ts';
import type { LmdbWriters } from './writers.ts';

/**
 * Keys: ['c', app, chat] → chat; ['m', app, chat, user] → member (partition: the chat's members);
 * ['uc', app, user, chat] → true (partition: a user's chats); ['d', app, lowId, highId] → chat id.
 */
export class LmdbChats implements ChatStore {
  constructor(
    private readonly t: Tables,
    private readonly writers: LmdbWriters,
  ) {}

  /** Inside a write transaction: a fenced write holds the chat or throws FencedError. */
  private fence(appId: string, chatId: string, options?: WriteOptions): void {
    if (options?.fenced) this.writers.take(appId, chatId);
  }

  private writeMembers(members: Member[]): void {
    for (const m of members) {
      this.t.db.put(['m', m.appId, m.chatId, m.userId], m);
      this.t.db.put(['uc', m.appId, m.userId, m.chatId], true);
    }
  }

  async create(chat: Chat, members: Member[]): Promise<void> {
    await this.t.root.transaction(() => {
      this.t.db.put(['c', chat.appId, chat.id], chat);
      this.writeMembers(members);
    });
  }

  ensureDirect(chat: Chat, members: [Member, Member]): Promise<{ chat: Chat; created: boolean }> {
    const [a, b] = [members[0].userId, members[1].userId].sort() as [string, string];
    return this.t.root.transaction(() => {
      const existingId = this.t.db.get(['d', chat.appId, a, b]) as string | undefined;
      const existing = existingId === undefined ? undefined : (this.t.db.get(['c', chat.appId, existingId]) as Chat | undefined);
      if (existing) return { chat: existing, created: false };
      this.t.db.put(['d', chat.appId, a, b], chat.id);
      this.t.db.put(['c', chat.appId, chat.id], chat);
      this.writeMembers(members);
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
      return 'updated' as const;
    });
  }

  delete(appId: string, chatId: string): Promise<'deleted' | 'not-found'> {
    return this.t.root.transaction(() => {
      const chat = this.t.db.get(['c', appId, chatId]) as Chat | undefined;
      if (!chat) return 'not-found' as const;
      const members = [...values<Member>(this.t.db, ['m', appId, chatId])];
      for (const m of members) {
        this.t.db.remove(['m', appId, chatId, m.userId]);
        this.t.db.remove(['uc', appId, m.userId, chatId]);
      }
      if (chat.kind === 'direct' && members.length === 2) {
        const [a, b] = members.map((m) => m.userId).sort() as [string, string];
        this.t.db.remove(['d', appId, a, b]);
      }
      this.t.db.remove(['c', appId, chatId]);
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
      this.writeMembers([current ? { ...member, joinedAt: current.joinedAt, readSeq: Math.max(current.readSeq, member.readSeq) } : member]);
    });
  }

  removeMember(appId: string, chatId: string, userId: string, options?: WriteOptions): Promise<'removed' | 'not-found'> {
    return this.t.root.transaction(() => {
      this.fence(appId, chatId, options);
      if (this.t.db.get(['m', appId, chatId, userId]) === undefined) return 'not-found' as const;
      this.t.db.remove(['m', appId, chatId, userId]);
      this.t.db.remove(['uc', appId, userId, chatId]);
      return 'removed' as const;
    });
  }

  async chatsOf(appId: string, userId: string): Promise<string[]> {
    const ids: string[] = [];
    for (const key of this.t.db.getKeys({ start: ['uc', appId, userId], end: ['uc', appId, userId, END] })) ids.push(String(key[3]));
    return ids;
  }

  markRead(appId: string, chatId: string, userId: string, seq: number): Promise<number | undefined> {
    return this.t.root.transaction(() => {
      const member = this.t.db.get(['m', appId, chatId, userId]) as Member | undefined;
      if (!member) return undefined;
      if (seq > member.readSeq) this.t.db.put(['m', appId, chatId, userId], { ...member, readSeq: seq });
      return Math.max(seq, member.readSeq);
    });
  }
}
