import { randomUUID } from 'node:crypto';
import { MemorySigningKeys } from '../../common/jwt/index.ts';
import { FencedError, type Chat, type ChatBan, type ChatHead, type ChatUser, type HeadFence, type Member, type NodeStore, type StoredMessage, type WriteOptions } from '../../node/store/index.ts';

/** A put the test holds until it says how it ends. */
export interface HeldPut {
  messages: StoredMessage[];
  fence?: HeadFence;
  release(): void;
  fail(error: unknown): void;
}

/**
 * A node store in memory, for unit tests of the chat actor: the parts the actor uses, with the
 * fence semantics of the real stores (a fenced put applies only on the head it names), and a gate
 * on message writes so a test decides when each put becomes durable or fails.
 */
export class MemoryNodeStore {
  readonly users = new Map<string, ChatUser>();
  readonly chatRows = new Map<string, Chat>();
  readonly memberRows = new Map<string, Map<string, Member>>();
  readonly messageRows = new Map<string, Map<string, StoredMessage>>();
  readonly heads = new Map<string, ChatHead>();
  readonly chatBans = new Map<string, ChatBan>();
  /** Every put, in order, as the store received it. */
  readonly puts: { messages: StoredMessage[]; fence?: HeadFence }[] = [];
  /** Every activity write, with the member ids it moved. */
  readonly activityWrites: { chat: Chat; userIds: string[] }[] = [];
  /** Puts waiting for the test (only while `holding`). */
  readonly held: HeldPut[] = [];
  holding = false;
  /** A fenced membership write fails with this while set (as if another node held the chat). */
  fenceMembership: FencedError | undefined;
  private readonly waiters: (() => void)[] = [];

  /**
   * A group chat of `users` new users of `appId`, all made at `at`: the first its owner, the others
   * with the role `roleOf` gives (members by default). Its rows are in the store when this returns.
   */
  groupChat(appId: string, users: number, at: string, roleOf: (i: number) => Member['role'] = (i) => (i === 0 ? 'owner' : 'member')): { chat: Chat; ids: string[] } {
    const ids = Array.from({ length: users }, () => randomUUID());
    for (const id of ids) this.users.set(id, { appId, id, username: id, displayName: id, createdAt: at, updatedAt: at });
    const chat: Chat = { appId, id: randomUUID(), kind: 'group', name: 'G', createdBy: ids[0]!, createdAt: at, updatedAt: at, lastSeq: 0, lastActivityAt: at };
    void this.store.chats.create(chat, ids.map((userId, i) => ({ appId, chatId: chat.id, userId, role: roleOf(i), joinedAt: at, readSeq: 0 })));
    return { chat, ids };
  }

  /** Resolves once `n` puts are held. */
  async heldPuts(n: number): Promise<HeldPut[]> {
    while (this.held.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.held.slice(0, n);
  }

  private head(appId: string, chatId: string): ChatHead {
    return this.heads.get(`${appId}/${chatId}`) ?? { seq: 0, rev: 0 };
  }

  /** As if another writer moved the chat's head. */
  moveHead(appId: string, chatId: string, head: ChatHead): void {
    this.heads.set(`${appId}/${chatId}`, head);
  }

  private apply(messages: StoredMessage[]): void {
    for (const m of messages) {
      const k = `${m.appId}/${m.chatId}`;
      let chat = this.messageRows.get(k);
      if (!chat) this.messageRows.set(k, (chat = new Map()));
      chat.set(m.id, structuredClone(m));
      const head = this.head(m.appId, m.chatId);
      this.heads.set(k, { seq: Math.max(head.seq, m.seq), rev: Math.max(head.rev, m.rev ?? 0) });
    }
  }

  private list(appId: string, chatId: string): StoredMessage[] {
    return [...(this.messageRows.get(`${appId}/${chatId}`)?.values() ?? [])].sort((a, b) => a.seq - b.seq);
  }

  private memberMap(appId: string, chatId: string): Map<string, Member> {
    const k = `${appId}/${chatId}`;
    let map = this.memberRows.get(k);
    if (!map) this.memberRows.set(k, (map = new Map()));
    return map;
  }

  private fenced(options?: WriteOptions): void {
    if (options?.fenced && this.fenceMembership) throw this.fenceMembership;
  }

  readonly store: NodeStore = {
    users: {
      create: async (user) => (this.users.has(user.id) ? 'exists' : (this.users.set(user.id, user), 'created')),
      get: async (_appId, userId) => this.users.get(userId),
      getByUsername: async (appId, username) => [...this.users.values()].find((u) => u.appId === appId && u.username === username),
      update: async (user) => (this.users.has(user.id) ? (this.users.set(user.id, user), 'updated') : 'not-found'),
      delete: async (_appId, userId) => (this.users.delete(userId) ? 'deleted' : 'not-found'),
    },
    userSessions: {
      createFamily: async () => undefined,
      getFamily: async () => undefined,
      rotate: async () => ({ kind: 'invalid' }),
      revokeAllForUser: async () => undefined,
      sweepExpired: async () => 0,
    },
    chats: {
      create: async (chat, members) => {
        this.chatRows.set(`${chat.appId}/${chat.id}`, chat);
        for (const m of members) this.memberMap(chat.appId, chat.id).set(m.userId, m);
      },
      ensureDirect: async (chat, members) => {
        this.chatRows.set(`${chat.appId}/${chat.id}`, chat);
        for (const m of members) this.memberMap(chat.appId, chat.id).set(m.userId, m);
        return { chat, created: true };
      },
      get: async (appId, chatId) => this.chatRows.get(`${appId}/${chatId}`),
      update: async (chat, options) => {
        this.fenced(options);
        if (!this.chatRows.has(`${chat.appId}/${chat.id}`)) return 'not-found';
        this.chatRows.set(`${chat.appId}/${chat.id}`, { ...chat });
        return 'updated';
      },
      delete: async (appId, chatId) => (this.chatRows.delete(`${appId}/${chatId}`) ? (this.memberRows.delete(`${appId}/${chatId}`), 'deleted') : 'not-found'),
      members: async (appId, chatId) => [...this.memberMap(appId, chatId).values()],
      member: async (appId, chatId, userId) => this.memberMap(appId, chatId).get(userId),
      putMember: async (member, options) => {
        this.fenced(options);
        const current = this.memberMap(member.appId, member.chatId).get(member.userId);
        this.memberMap(member.appId, member.chatId).set(member.userId, current ? { ...member, joinedAt: current.joinedAt, readSeq: Math.max(current.readSeq, member.readSeq) } : member);
      },
      removeMember: async (appId, chatId, userId, options) => {
        this.fenced(options);
        return this.memberMap(appId, chatId).delete(userId) ? 'removed' : 'not-found';
      },
      chatsOf: async (appId, userId) => [...this.memberRows.entries()].filter(([k, m]) => k.startsWith(`${appId}/`) && m.has(userId)).map(([k]) => k.split('/')[1]!),
      // The actor tests need only the row write and the member ids it was given.
      chatsByActivity: async () => [],
      writeActivity: async (chat, userIds) => {
        this.activityWrites.push({ chat: { ...chat }, userIds: [...userIds] });
        if (!this.chatRows.has(`${chat.appId}/${chat.id}`)) return 'not-found';
        this.chatRows.set(`${chat.appId}/${chat.id}`, { ...chat });
        return 'updated';
      },
      chatCounts: async (_appId, userIds) => new Map(userIds.map((id) => [id, 0])),
      recountChats: async () => 0,
      markRead: async (appId, chatId, userId, seq) => {
        const m = this.memberMap(appId, chatId).get(userId);
        if (!m) return undefined;
        m.readSeq = Math.max(m.readSeq, seq);
        return m.readSeq;
      },
      writeReadMarks: async (appId, chatId, marks) => {
        for (const { userId, seq } of marks) {
          const m = this.memberMap(appId, chatId).get(userId);
          if (m) m.readSeq = Math.max(m.readSeq, seq);
        }
      },
    },
    messages: {
      put: (messages, fence) => {
        this.puts.push({ messages: structuredClone(messages), ...(fence ? { fence } : {}) });
        const first = messages[0];
        const settle = () => {
          if (fence && first) {
            const found = this.head(first.appId, first.chatId);
            if (found.seq !== fence.from.seq || found.rev !== fence.from.rev) throw new FencedError(first.appId, first.chatId, found);
            this.heads.set(`${first.appId}/${first.chatId}`, fence.to);
          }
          this.apply(messages);
        };
        if (!this.holding) return Promise.resolve().then(settle);
        return new Promise<void>((resolve, reject) => {
          this.held.push({
            messages,
            ...(fence ? { fence } : {}),
            release: () => {
              try {
                settle();
                resolve();
              } catch (error) {
                reject(error);
              }
            },
            fail: reject,
          });
          for (const wake of this.waiters.splice(0)) wake();
        });
      },
      get: async (appId, chatId, id) => this.messageRows.get(`${appId}/${chatId}`)?.get(id),
      getMany: async (appId, chatId, ids) => ids.map((id) => this.messageRows.get(`${appId}/${chatId}`)?.get(id)),
      pageBackward: async (appId, chatId, beforeId, limit) => {
        const all = this.list(appId, chatId).reverse();
        const before = beforeId === undefined ? undefined : all.find((m) => m.id === beforeId)?.seq;
        return all.filter((m) => before === undefined || m.seq < before).slice(0, limit);
      },
      afterSeq: async (appId, chatId, afterSeq, limit) => this.list(appId, chatId).filter((m) => m.seq > afterSeq).slice(0, limit),
      lastSeq: async (appId, chatId) => this.head(appId, chatId).seq,
      lastRev: async (appId, chatId) => this.head(appId, chatId).rev,
      newest: async (appId, chatId) => this.head(appId, chatId),
      changedSince: async (appId, chatId, afterRev, limit) => this.list(appId, chatId).filter((m) => (m.rev ?? 0) > afterRev).sort((a, b) => (a.rev ?? 0) - (b.rev ?? 0)).slice(0, limit),
      byClientKey: async (appId, chatId, senderId, clientKey) => this.list(appId, chatId).find((m) => m.senderId === senderId && m.clientKey === clientKey),
      attachmentHolder: async (appId, chatId, uploadId) => this.list(appId, chatId).find((m) => m.attachments?.some((a) => a.id === uploadId))?.id,
      mentionsBetween: async (appId, chatId, userId, afterSeq, upToSeq, limit) =>
        this.list(appId, chatId)
          .filter((m) => m.seq > afterSeq && m.seq <= upToSeq && m.deletedAt === undefined && m.mentions?.includes(userId))
          .map((m) => m.seq)
          .reverse()
          .slice(0, limit),
    },
    writers: { self: { id: randomUUID() }, announce: () => undefined, release: async () => undefined, settle: async () => undefined },
    // The actor tests use no webhooks: an outbox that keeps nothing.
    outbox: { append: async () => undefined, pending: async () => [], progress: async () => undefined, confirm: async () => undefined, owners: async () => [], retire: async () => undefined },
    // The actor tests keep chat bans (the actor checks them) and no other moderation: no bans, no log.
    moderation: {
      ban: async () => undefined, unban: async () => 'not-banned', banOf: async () => undefined, bans: async () => [], actions: async () => [], block: async () => 'blocked', unblock: async () => 'not-blocked', blocks: async () => [], blockOf: async () => undefined, blocklist: async () => undefined, setBlocklist: async () => undefined, log: async () => undefined,
      chatBan: async (ban) => void this.chatBans.set(`${ban.appId}/${ban.chatId}/${ban.userId}`, ban),
      liftChatBan: async (appId, chatId, userId) => (this.chatBans.delete(`${appId}/${chatId}/${userId}`) ? 'lifted' : 'not-banned'),
      chatBanOf: async (appId, chatId, userId, now) => { const ban = this.chatBans.get(`${appId}/${chatId}/${userId}`); return ban && (ban.expiresAt === undefined || ban.expiresAt > now) ? ban : undefined; },
      chatBans: async (appId, chatId) => [...this.chatBans.values()].filter((b) => b.appId === appId && b.chatId === chatId),
    },
    flags: { flag: async () => ({ result: 'flagged', open: 1 }), open: async () => [], get: async () => undefined, resolve: async () => [], hideThreshold: async () => 0, setHideThreshold: async () => undefined },
    // The actor tests send no replies: nobody follows a thread.
    // The actor tests register no push devices.
    push: { register: async () => ({ result: 'limit' }), list: async () => [], remove: async () => 'not-found', chatMuted: async () => false, muteChat: async () => {} },
    search: { postings: async () => [], cursor: () => ({ next: async () => [] }), termsWithPrefix: async () => [], settled: async () => undefined },
    threads: { get: async () => undefined, getMany: async (_a, _u, keys) => keys.map(() => undefined), put: async () => undefined, touch: async () => undefined, followers: async () => [], threadsOf: async () => [], forget: async () => undefined, byActivity: async () => [], unread: async () => [] },
    signingKeys: new MemorySigningKeys(),
    writeStats: () => undefined,
    close: async () => undefined,
  };
}
