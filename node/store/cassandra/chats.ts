import cassandra, { type types } from 'cassandra-driver';
import { applied, claimRow, dataOf, dataText, defined, num, opt, str, timedOut, type Cql } from '../../../common/cassandra/index.ts';
import type { ActivityPosition, Chat, ChatKind, ChatStore, EventOptions, Member, MemberRole, StoredPin, WriteOptions } from '../types.ts';
import type { CassandraLeases, Hold } from './leases.ts';
import type { ChangeEvents } from './outbox.ts';
import { UserChatIndex } from './user-chat-index.ts';


const { unset } = cassandra.types;
/** A chat's pins travel as JSON in one column (null: none). */
const pinsText = (c: Chat) => (c.pins?.length ? JSON.stringify(c.pins) : undefined);
const pinsOf = (text: string | undefined) => (text === undefined ? undefined : (JSON.parse(text) as StoredPin[]));

/** A member's mute travels as JSON in one column (null: not muted). */
const muteText = (m: Member) => (m.mute ? JSON.stringify(m.mute) : null);
const muteOf = (row: types.Row): Pick<Member, 'mute'> => {
  const text = row.get('mute') as string | null | undefined;
  return text ? { mute: JSON.parse(text) as NonNullable<Member['mute']> } : {};
};

/**
 * Chats (partition: the chat), members (partition: the chat's members), a user's chats (partition:
 * the user: see user-chat-index.ts) and direct pairs. A direct chat is claimed with a compare-and-set on the unordered pair;
 * a read mark only rises, by compare-and-set on the member's `read_seq`. A fenced membership write
 * adds `writer_epoch = <ours>` to its compare-and-set: the members partition carries the chat's
 * writer lease (leases.ts), so a node that lost the chat cannot change its members. Webhook events
 * (EventOptions) are written ahead of their change and confirmed after it (ChangeEvents).
 */
export class CassandraChats implements ChatStore {
  private readonly index: UserChatIndex;

  constructor(
    private readonly db: Cql,
    private readonly ks: string,
    private readonly leases: CassandraLeases,
    private readonly events: ChangeEvents,
  ) {
    this.index = new UserChatIndex(db, ks);
  }

  /** The hold a fenced write needs, or undefined for an unfenced one. */
  private fence(appId: string, chatId: string, options?: WriteOptions): Promise<Hold | undefined> {
    return options?.fenced ? this.leases.writable(appId, chatId) : Promise.resolve(undefined);
  }

  /** After a fenced compare-and-set was not applied: FencedError when it was our epoch that failed it. */
  private async checkEpoch(hold: Hold | undefined, result: types.ResultSet): Promise<void> {
    if (!hold) return;
    const row = result.first();
    const epoch = row?.get('writer_epoch');
    if (epoch === null || epoch === undefined || num(row!, 'writer_epoch') !== hold.epoch) throw await this.leases.lost(hold);
  }

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
      memberCount: row.get('member_count') === null || row.get('member_count') === undefined ? undefined : num(row, 'member_count'),
      data: dataOf(opt(row, 'data')),
      pins: pinsOf(opt(row, 'pins')),
    });
  }

  private readMember(row: types.Row): Member {
    return { appId: str(row, 'app_id'), chatId: str(row, 'chat_id'), userId: str(row, 'user_id'), role: str(row, 'role') as MemberRole, joinedAt: str(row, 'joined_at'), readSeq: num(row, 'read_seq'), ...muteOf(row) };
  }

  private writeChat(c: Chat, condition = '') {
    return this.db.execute(
      `INSERT INTO ${this.ks}.chats (app_id, id, kind, name, created_by, created_at, updated_at, last_seq, last_activity_at, member_count, data, pins) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ${condition}`,
      [c.appId, c.id, c.kind, c.name ?? null, c.createdBy, c.createdAt, c.updatedAt, c.lastSeq, c.lastActivityAt, c.memberCount ?? null, dataText(c.data) ?? unset, pinsText(c) ?? unset],
    );
  }

  /** Members of a new chat, indexed at its activity time. */
  private writeMembers(chat: Chat, members: Member[]) {
    return Promise.all(
      members.flatMap((m) => [
        this.db.execute(`INSERT INTO ${this.ks}.chat_members (app_id, chat_id, user_id, role, joined_at, read_seq) VALUES (?, ?, ?, ?, ?, ?)`, [m.appId, m.chatId, m.userId, m.role, m.joinedAt, m.readSeq]),
        this.index.add(m.appId, m.userId, m.chatId, chat.lastActivityAt),
      ]),
    );
  }

  async create(chat: Chat, members: Member[], options?: EventOptions): Promise<void> {
    await this.events.around(options?.events, () => Promise.all([this.writeChat(chat), this.writeMembers(chat, members)]), () => true);
  }

  /**
   * The chat row is written before the pair is claimed, so a claimed pair always names a stored
   * chat (a losing attempt removes its own row). Members are written only by the winner, after
   * its claim, so no user ever lists a losing attempt's chat. A claim naming a chat that is gone
   * is left by a delete (the chat row goes first), so that claim is released and tried again.
   */
  ensureDirect(chat: Chat, members: [Member, Member], options?: EventOptions): Promise<{ chat: Chat; created: boolean }> {
    return this.events.around(options?.events, () => this.claimDirect(chat, members), (r) => r.created);
  }

  private async claimDirect(chat: Chat, members: [Member, Member]): Promise<{ chat: Chat; created: boolean }> {
    const [low, high] = [members[0].userId, members[1].userId].sort() as [string, string];
    await this.writeChat(chat);
    for (let attempt = 0; attempt < 50; attempt++) {
      const claim = await claimRow(this.db, `INSERT INTO ${this.ks}.direct_pairs (app_id, low, high, chat_id) VALUES (?, ?, ?, ?) IF NOT EXISTS`, [chat.appId, low, high, chat.id], 'chat_id', chat.id);
      if (claim.won) {
        await this.writeMembers(chat, members);
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

  /**
   * The chat row is another partition than the lease, so a fenced update is fenced in time: it is
   * sent while the hold is valid and counts only if it lands inside it (see leases.ts, point 2).
   */
  update(chat: Chat, options?: WriteOptions): Promise<'updated' | 'not-found'> {
    return this.events.around(options?.events, () => this.updateRow(chat, options), (r) => r === 'updated');
  }

  private async updateRow(chat: Chat, options?: WriteOptions): Promise<'updated' | 'not-found'> {
    const run = () =>
      this.db.execute(
        `UPDATE ${this.ks}.chats SET kind = ?, name = ?, created_by = ?, created_at = ?, updated_at = ?, last_seq = ?, last_activity_at = ?, member_count = ?, data = ?, pins = ? WHERE app_id = ? AND id = ? IF EXISTS`,
        [chat.kind, chat.name ?? null, chat.createdBy, chat.createdAt, chat.updatedAt, chat.lastSeq, chat.lastActivityAt, chat.memberCount ?? null, dataText(chat.data) ?? null, pinsText(chat) ?? null, chat.appId, chat.id],
      );
    const hold = await this.fence(chat.appId, chat.id, options);
    const result = hold ? await this.leases.write(hold, run) : await run();
    return applied(result) ? 'updated' : 'not-found';
  }

  delete(appId: string, chatId: string, options?: EventOptions): Promise<'deleted' | 'not-found'> {
    return this.events.around(options?.events, () => this.deleteChat(appId, chatId), (r) => r === 'deleted');
  }

  private async deleteChat(appId: string, chatId: string): Promise<'deleted' | 'not-found'> {
    const chat = await this.get(appId, chatId);
    if (!chat) return 'not-found';
    const members = await this.members(appId, chatId);
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.chats WHERE app_id = ? AND id = ? IF EXISTS`, [appId, chatId]);
    if (!applied(gone)) return 'not-found';
    const deletes: Promise<unknown>[] = members.map((m) => this.index.remove(appId, m.userId, chatId));
    deletes.push(this.db.execute(`DELETE FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ?`, [appId, chatId]));
    if (chat.kind === 'direct' && members.length === 2) {
      const [low, high] = members.map((m) => m.userId).sort() as [string, string];
      deletes.push(this.db.execute(`DELETE FROM ${this.ks}.direct_pairs WHERE app_id = ? AND low = ? AND high = ? IF chat_id = ?`, [appId, low, high, chatId]));
    }
    await Promise.all(deletes);
    return 'deleted';
  }

  async members(appId: string, chatId: string): Promise<Member[]> {
    // A partition whose members are all gone still has its static columns: a row without a member.
    const rows = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ?`, [appId, chatId])).rows;
    // A row without a role: a read mark written just after the member's removal (writeReadMarks).
    return rows.filter((r) => r.get('user_id') !== null && r.get('role') !== null).map((r) => this.readMember(r));
  }

  async member(appId: string, chatId: string, userId: string): Promise<Member | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? AND user_id = ?`, [appId, chatId, userId])).first();
    return row && row.get('role') !== null ? this.readMember(row) : undefined;
  }

  /**
   * Compare-and-set, not read-then-write: `markRead` raises `read_seq` by compare-and-set, and a
   * plain write of a value read earlier could lower it again. A new member is inserted `IF NOT
   * EXISTS`; an existing one is updated `IF read_seq = <the value read>`; a lost race re-reads.
   */
  putMember(member: Member, options?: WriteOptions): Promise<void> {
    return this.events.around(options?.events, () => this.writeMember(member, options), () => true);
  }

  private async writeMember(member: Member, options?: WriteOptions): Promise<void> {
    const { appId, chatId, userId } = member;
    const hold = await this.fence(appId, chatId, options);
    const epoch = hold ? ' AND writer_epoch = ?' : '';
    const fenceParams = hold ? [hold.epoch] : [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.member(appId, chatId, userId);
      const result = current
        ? await this.casRound(`UPDATE ${this.ks}.chat_members SET role = ?, read_seq = ?, mute = ? WHERE app_id = ? AND chat_id = ? AND user_id = ? IF read_seq = ?${epoch}`, [member.role, Math.max(current.readSeq, member.readSeq), muteText(member), appId, chatId, userId, current.readSeq, ...fenceParams])
        : await this.casRound(`UPDATE ${this.ks}.chat_members SET role = ?, joined_at = ?, read_seq = ?, mute = ? WHERE app_id = ? AND chat_id = ? AND user_id = ? IF role = null${epoch}`, [member.role, member.joinedAt, member.readSeq, muteText(member), appId, chatId, userId, ...fenceParams]);
      // Unknown outcome: the next round reads the member again, and writes the same values if it landed.
      if (!result) continue;
      if (!applied(result)) {
        await this.checkEpoch(hold, result);
        continue;
      }
      // A new member is indexed at the chat's activity time; an update re-asserts the index entry
      // (it may be missing after a failed earlier put).
      const at = async () => (await this.get(appId, chatId))?.lastActivityAt ?? member.joinedAt;
      if (current) await this.index.ensure(appId, userId, chatId, at);
      else await this.index.add(appId, userId, chatId, await at());
      return;
    }
    throw new Error('member contended past 20 attempts');
  }

  removeMember(appId: string, chatId: string, userId: string, options?: WriteOptions): Promise<'removed' | 'not-found'> {
    return this.events.around(options?.events, () => this.deleteMember(appId, chatId, userId, options), (r) => r === 'removed');
  }

  private async deleteMember(appId: string, chatId: string, userId: string, options?: WriteOptions): Promise<'removed' | 'not-found'> {
    const hold = await this.fence(appId, chatId, options);
    const gone = hold
      ? await this.db.execute(`DELETE FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? AND user_id = ? IF role != null AND writer_epoch = ?`, [appId, chatId, userId, hold.epoch])
      : await this.db.execute(`DELETE FROM ${this.ks}.chat_members WHERE app_id = ? AND chat_id = ? AND user_id = ? IF EXISTS`, [appId, chatId, userId]);
    if (!applied(gone)) {
      await this.checkEpoch(hold, gone);
      return 'not-found';
    }
    await this.index.remove(appId, userId, chatId);
    return 'removed';
  }

  chatsOf(appId: string, userId: string): Promise<string[]> {
    return this.index.chats(appId, userId);
  }

  chatsByActivity(appId: string, userId: string, after: ActivityPosition | undefined, limit: number): Promise<ActivityPosition[]> {
    return this.index.page(appId, userId, after, limit);
  }

  /** The row as `update` writes it (unfenced), then the members' entries, moved from `previousAt`. */
  async writeActivity(chat: Chat, userIds: string[], previousAt?: string): Promise<'updated' | 'not-found'> {
    if ((await this.update(chat)) === 'not-found') return 'not-found';
    await this.index.move(chat.appId, chat.id, userIds, chat.lastActivityAt, previousAt);
    return 'updated';
  }

  chatCounts(appId: string, userIds: string[]): Promise<Map<string, number>> {
    return this.index.counts(appId, userIds);
  }

  recountChats(appId: string, userId: string): Promise<number> {
    return this.index.recount(appId, userId);
  }

  /**
   * One compare-and-set round of a read-then-compare-and-set loop, or undefined when its outcome is
   * unknown (a timeout: on a ring, concurrent rounds on one partition contend, and one may time out
   * after it applied). The loop then reads again, which makes retrying safe.
   */
  private async casRound(query: string, params: unknown[]): Promise<types.ResultSet | undefined> {
    try {
      return await this.db.execute(query, params);
    } catch (error) {
      if (timedOut(error)) return undefined;
      throw error;
    }
  }

  async markRead(appId: string, chatId: string, userId: string, seq: number): Promise<number | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const member = await this.member(appId, chatId, userId);
      if (!member) return undefined;
      if (seq <= member.readSeq) return member.readSeq;
      const result = await this.casRound(`UPDATE ${this.ks}.chat_members SET read_seq = ? WHERE app_id = ? AND chat_id = ? AND user_id = ? IF read_seq = ?`, [seq, appId, chatId, userId, member.readSeq]);
      // Unknown outcome (undefined): the next round reads the mark again; one that landed is then
      // at least `seq`, or the next compare-and-set, which first completes any round in progress
      // on the partition (Paxos), finds it moved and reads again.
      if (result && applied(result)) return seq;
    }
    throw new Error('read mark contended past 20 attempts');
  }

  /**
   * One unlogged batch within the chat's members partition. An update of a removed member leaves a
   * row with a read mark and no role; `members` and `member` skip such rows, and adding the user
   * again (`IF role = null`) overwrites it.
   */
  async writeReadMarks(appId: string, chatId: string, marks: ReadonlyArray<{ userId: string; seq: number }>): Promise<void> {
    if (marks.length === 0) return;
    const query = `UPDATE ${this.ks}.chat_members SET read_seq = ? WHERE app_id = ? AND chat_id = ? AND user_id = ?`;
    if (marks.length === 1) {
      await this.db.execute(query, [marks[0]!.seq, appId, chatId, marks[0]!.userId]);
      return;
    }
    await this.db.batch(marks.map(({ userId, seq }) => ({ query, params: [seq, appId, chatId, userId] })));
  }
}
