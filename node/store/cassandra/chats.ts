import type { types } from 'cassandra-driver';
import { applied, claimRow, defined, num, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import type { Chat, ChatKind, ChatStore, Member, MemberRole } from '../types.ts';

/**
 * Chats (partition: the chat), members (partition: the chat's members), a user's chats (partition:
 * the user) and direct pairs. A direct chat is claimed with a compare-and-set on the unordered pair;
 * a read mark only rises, by compare-and-set on the member's `read_seq`.
 */
export class CassandraChats implements ChatStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  private readChat(row: types.Row): Chat {
    return defined({
      appId: str(row, 'app_id'),
      id: str(row, 'id'),
      kind: str(row, 'kind') as ChatKind,
      name: opt(row, 'name'),
      createdBy: str(row, 'created_by'),
      createdAt: str(row, 'created_at'),
      updatedAt: str(row, 'updated_at'),
      lastSeq: num(row, 'last_seq'),
      lastActivityAt: str(row, 'last_activity_at'),
    });
  }

  private readMember(row: types.Row): Member {
    return { appId: str(row, 'app_id'), chatId: str(row, 'chat_id'), userId: str(row, 'user_id'), role: str(row, 'role') as MemberRole, joinedAt: str(row, 'joined_at'), readSeq: num(row, 'read_seq') };
  }

  private writeChat(c: Chat, condition = '') {
    return this.db.execute(
      `INSERT INTO ${this.ks}.chats (app_id, id, kind, name, created_by, created_at, updated_at, last_seq, last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${condition}`,
      [c.appId, c.id, c.kind, c.name ?? null, c.createdBy, c.createdAt, c.updatedAt, c.lastSeq, c.lastActivityAt],
    );
  }

  private writeMembers(members: Member[]) {
    return Promise.all(
      members.flatMap((m) => [
        this.db.execute(`INSERT INTO ${this.ks}.chat_members (app_id, chat_id, user_id, role, joined_at, read_seq) VALUES (?, ?, ?, ?, ?, ?)`, [m.appId, m.chatId, m.userId, m.role, m.joinedAt, m.readSeq]),
        this.db.execute(`INSERT INTO ${this.ks}.user_chats (app_id, user_id, chat_id) VALUES (?, ?, ?)`, [m.appId, m.userId, m.chatId]),
      ]),
    );
  }

  async create(chat: Chat, members: Member[]): Promise<void> {
    await Promise.all([this.writeChat(chat), this.writeMembers(members)]);
  }

  /**
   * The chat row is written before the pair is claimed, so a claimed pair always names a stored
   * chat (a losing attempt removes its own row). Members are written only by the winner, after
   * its claim, so no user ever lists a losing attempt's chat. A claim naming a chat that is gone
   * is left by a delete (the chat row goes first), so that claim is released and tried again.
   */
  async ensureDirect(chat: Chat, members: [Member, Member]): Promise<{ chat: Chat; created: boolean }> {
    const [low, high] = [members[0].userId, members[1].userId].sort() as [string, string];
    await this.writeChat(chat);
    for (let attempt = 0; attempt < 50; attempt++) {
      const claim = await claimRow(this.db, `INSERT INTO ${this.ks}.direct_pairs (app_id, low, high, chat_id) VALUES (?, ?, ?, ?) IF NOT EXISTS`, [chat.appId, low, high, chat.id], 'chat_id', chat.id);
      if (claim.won) {
        await this.writeMembers(members);
        return { chat, created: true };
      }
      const holder = str(claim.row!, 'chat_id');
      const existing = await this.get(chat.appId, holder);
      if (existing) {
        await this.db.execute(`DELETE FROM ${this.ks}.chats WHERE app_id = ? AND id = ?`, [chat.appId, chat.id]);
        return { chat: existing, created: false };
      }
      // Free the pair only while it still names the missing chat, then claim again.
      await this.db.execute(`DELETE FROM ${this.ks}.direct_pairs WHERE app_id = ? AND low = ? AND high = ? IF chat_id = ?`, [chat.appId, low, high, holder]);
    }
    throw new Error(`direct pair ${low}/${high} contended past 50 attempts`);
  }

  async get(appId: string, chatId: string): Promise<Chat | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.chats WHERE app_id = ? AND id = ?`, [appId, chatId])).first();
    return row ? this.readChat(row) : undefined;
  }

  async update(chat: Chat): Promise<'updated' | 'not-found'> {
    const result = await this.db.execute(
      `UPDATE ${this.ks}.chats SET kind = ?, name = ?, created_by = ?, created_at = ?, updated_at = ?, last_seq = ?, last_activity_at = ? WHERE app_id = ? AND id = ? IF EXISTS`,
      [chat.kind, chat.name ?? null, chat.createdBy, chat.createdAt, chat.updatedAt, chat.lastSeq, chat.lastActivityAt, chat.appId, chat.id],
    );
    return applied(result) ? 'updated' : 'not-found';
  }

  async delete(appId: string, chatId: string): Promise<'deleted' | 'not-found'> {
    const chat = await this.get(appId, chatId);
    if (!chat) return 'not-found';
    const members = await this.members(appId, chatId);
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.chats WHERE app_id = ? AND id = ? IF EXISTS`, [appId, chatId]);
    if (!applied(gone)) return 'not-found';
    const deletes = members.map((m) => this.db.execute(`DELETE FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [appId, m.userId, chatId]));
    deletes.push(this.db.execute(`DELETE FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ?`, [appId, chatId]));
    if (chat.kind === 'direct' && members.length === 2) {
      const [low, high] = members.map((m) => m.userId).sort() as [string, string];
      deletes.push(this.db.execute(`DELETE FROM ${this.ks}.direct_pairs WHERE app_id = ? AND low = ? AND high = ? IF chat_id = ?`, [appId, low, high, chatId]));
    }
    await Promise.all(deletes);
    return 'deleted';
  }

  async members(appId: string, chatId: string): Promise<Member[]> {
    return (await this.db.execute(`SELECT * FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ?`, [appId, chatId])).rows.map((r) => this.readMember(r));
  }

  async member(appId: string, chatId: string, userId: string): Promise<Member | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? AND user_id = ?`, [appId, chatId, userId])).first();
    return row ? this.readMember(row) : undefined;
  }

  /**
   * Compare-and-set, not read-then-write: `markRead` raises `read_seq` by compare-and-set, and a
   * plain write of a value read earlier could lower it again. A new member is inserted `IF NOT
   * EXISTS`; an existing one is updated `IF read_seq = <the value read>`; a lost race re-reads.
   */
  async putMember(member: Member): Promise<void> {
    const { appId, chatId, userId } = member;
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.member(appId, chatId, userId);
      const result = current
        ? await this.db.execute(`UPDATE ${this.ks}.chat_members SET role = ?, read_seq = ? WHERE app_id = ? AND chat_id = ? AND user_id = ? IF read_seq = ?`, [member.role, Math.max(current.readSeq, member.readSeq), appId, chatId, userId, current.readSeq])
        : await this.db.execute(`INSERT INTO ${this.ks}.chat_members (app_id, chat_id, user_id, role, joined_at, read_seq) VALUES (?, ?, ?, ?, ?, ?) IF NOT EXISTS`, [appId, chatId, userId, member.role, member.joinedAt, member.readSeq]);
      if (!applied(result)) continue;
      // Idempotent, so an update re-asserts it too (it may be missing after a failed earlier put).
      await this.db.execute(`INSERT INTO ${this.ks}.user_chats (app_id, user_id, chat_id) VALUES (?, ?, ?)`, [appId, userId, chatId]);
      return;
    }
    throw new Error('member contended past 20 attempts');
  }

  async removeMember(appId: string, chatId: string, userId: string): Promise<'removed' | 'not-found'> {
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? AND user_id = ? IF EXISTS`, [appId, chatId, userId]);
    if (!applied(gone)) return 'not-found';
    await this.db.execute(`DELETE FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [appId, userId, chatId]);
    return 'removed';
  }

  async chatsOf(appId: string, userId: string): Promise<string[]> {
    return (await this.db.execute(`SELECT chat_id FROM ${this.ks}.user_chats WHERE app_id = ? AND user_id = ?`, [appId, userId])).rows.map((r) => str(r, 'chat_id'));
  }

  async markRead(appId: string, chatId: string, userId: string, seq: number): Promise<number | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const member = await this.member(appId, chatId, userId);
      if (!member) return undefined;
      if (seq <= member.readSeq) return member.readSeq;
      const result = await this.db.execute(`UPDATE ${this.ks}.chat_members SET read_seq = ? WHERE app_id = ? AND chat_id = ? AND user_id = ? IF read_seq = ?`, [seq, appId, chatId, userId, member.readSeq]);
      if (applied(result)) return seq;
    }
    throw new Error('read mark contended past 20 attempts');
  }
}
