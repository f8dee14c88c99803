import { randomUUID } from 'node:crypto';
import cassandra, { type types } from 'cassandra-driver';
import { latestOfEach, neverWritten } from '../batches.ts';
import { bucketOf } from '../buckets.ts';
import { FencedError, type ChatHead, type HeadFence, type MessageStore, type StoredMessage, type StoredReaction } from '../types.ts';
import { applied, defined, num, opt, str, timedOut, type Cql } from '../../../common/cassandra/index.ts';

const MOVE_ATTEMPTS = 5;
const same = (a: ChatHead, b: ChatHead) => a.seq === b.seq && a.rev === b.rev;
/** The head in a chat_heads row, or in the result of a compare-and-set not applied (none when the row does not exist). */
const headOf = (row: types.Row | null | undefined): ChatHead | undefined =>
  row && row.get('seq') !== null && row.get('seq') !== undefined ? { seq: num(row, 'seq'), rev: num(row, 'rev') } : undefined;

/**
 * Messages partitioned by (app, chat, day bucket), clustered by id newest first, with the indexes
 * of node/store/cassandra/schema.ts. Every write is an upsert of the same values, so writing a
 * message twice leaves one copy; a rewrite with a new revision drops the index row of the old one.
 */
export class CassandraMessages implements MessageStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  private read(row: types.Row): StoredMessage {
    return defined({
      appId: str(row, 'app_id'),
      chatId: str(row, 'chat_id'),
      id: str(row, 'id'),
      seq: num(row, 'seq'),
      senderId: str(row, 'sender_id'),
      content: str(row, 'content'),
      createdAt: str(row, 'created_at'),
      editedAt: opt(row, 'edited_at'),
      deletedAt: opt(row, 'deleted_at'),
      replyToId: opt(row, 'reply_to_id'),
      reactions: JSON.parse(opt(row, 'reactions') ?? '[]') as StoredReaction[],
      clientKey: opt(row, 'client_key'),
      rev: row.get('rev') === null ? undefined : num(row, 'rev'),
    });
  }

  /**
   * Messages are written concurrently, each by separate single-partition statements (a batch over
   * several partitions would only add coordinator work). At LOCAL_QUORUM a resolved put is on a
   * majority of the local replicas' commit logs. A message given twice is written once, as its
   * last version, so two versions of it never race over its revision index row.
   */
  async put(messages: StoredMessage[], fence?: HeadFence): Promise<void> {
    if (messages.length === 0) return;
    if (fence) {
      const first = messages[0]!;
      if (messages.some((m) => m.appId !== first.appId || m.chatId !== first.chatId)) throw new Error('a fenced put writes one chat');
      await this.moveHead(first.appId, first.chatId, fence);
    }
    await Promise.all(latestOfEach(messages).map((m) => (neverWritten(m, fence) ? this.putNew(m) : this.putOne(m))));
  }

  /** A message's first write (see neverWritten): every row at once, no read. */
  private async putNew(m: StoredMessage): Promise<void> {
    await Promise.all([...this.indexWrites(m), ...this.rowWrites(m)]);
  }

  /**
   * The message row is written last because its `rev` is what the next write of the message reads
   * to find the revision index row to delete: a put that fails before it leaves the old `rev` in
   * place, so a retry still deletes the old index row. Every statement is an upsert of the same
   * values, so retrying or repeating a put is harmless.
   */
  private async putOne(m: StoredMessage): Promise<void> {
    const bucket = bucketOf(m.id);
    const key = [m.appId, m.chatId];
    const previous = (await this.db.execute(`SELECT rev FROM ${this.ks}.messages WHERE app_id = ? AND chat_id = ? AND bucket = ? AND id = ?`, [...key, bucket, m.id])).first();
    const previousRev = previous && previous.get('rev') !== null ? num(previous, 'rev') : undefined;
    const indexes = this.indexWrites(m);
    if (previousRev !== undefined && previousRev !== m.rev) indexes.push(this.db.execute(`DELETE FROM ${this.ks}.message_revs WHERE app_id = ? AND chat_id = ? AND rev = ?`, [...key, previousRev]));
    await Promise.all(indexes);
    await Promise.all(this.rowWrites(m));
  }

  private indexWrites(m: StoredMessage): Promise<unknown>[] {
    const key = [m.appId, m.chatId];
    const bucket = bucketOf(m.id);
    const writes = [this.db.execute(`INSERT INTO ${this.ks}.message_buckets (app_id, chat_id, bucket) VALUES (?, ?, ?)`, [...key, bucket])];
    if (m.rev !== undefined) writes.push(this.db.execute(`INSERT INTO ${this.ks}.message_revs (app_id, chat_id, rev, bucket, id) VALUES (?, ?, ?, ?, ?)`, [...key, m.rev, bucket, m.id]));
    if (m.clientKey !== undefined) writes.push(this.db.execute(`INSERT INTO ${this.ks}.message_keys (app_id, chat_id, sender_id, client_key, id) VALUES (?, ?, ?, ?, ?)`, [...key, m.senderId, m.clientKey, m.id]));
    return writes;
  }

  /** The message row and its seq index row. */
  private rowWrites(m: StoredMessage): Promise<unknown>[] {
    const key = [m.appId, m.chatId];
    const bucket = bucketOf(m.id);
    return [
      this.db.execute(
        `INSERT INTO ${this.ks}.messages (app_id, chat_id, bucket, id, seq, sender_id, content, created_at, edited_at, deleted_at, reply_to_id, reactions, client_key, rev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [...key, bucket, m.id, m.seq, m.senderId, m.content, m.createdAt, m.editedAt ?? null, m.deletedAt ?? null, m.replyToId ?? null, JSON.stringify(m.reactions), m.clientKey ?? null, m.rev ?? null],
      ),
      this.db.execute(`INSERT INTO ${this.ks}.message_seqs (app_id, chat_id, seq, bucket, id) VALUES (?, ?, ?, ?, ?)`, [...key, m.seq, bucket, m.id]),
    ];
  }

  /**
   * Moves the chat's head from `fence.from` to `fence.to` by compare-and-set, before any message is
   * written: if another writer moved it, FencedError and nothing is written. The head is the row's,
   * or the indexes' where they are higher (a chat from before heads has no row; unfenced puts move
   * only the indexes), so it is what lastSeq and lastRev report. A compare-and-set that times out
   * has an unknown outcome: a serial read (which also completes it if it was accepted) finds whether
   * this put's writer id is the head's.
   */
  private async moveHead(appId: string, chatId: string, { from, to }: HeadFence): Promise<void> {
    const key = [appId, chatId];
    const writer = randomUUID();
    const move = (expected: ChatHead) =>
      this.db.execute(`UPDATE ${this.ks}.chat_heads SET seq = ?, rev = ?, writer = ? WHERE app_id = ? AND chat_id = ? IF seq = ? AND rev = ?`, [to.seq, to.rev, writer, ...key, expected.seq, expected.rev]);
    for (let attempt = 1; ; attempt++) {
      try {
        const moved = await move(from);
        if (applied(moved)) return;
        const row = headOf(moved.first());
        const found = await this.withIndexes(appId, chatId, row);
        if (!same(found, from)) throw new FencedError(appId, chatId, found);
        // The head is `from` but the row lags behind the indexes: bring it to `to` from what it holds.
        const caught = row
          ? await move(row)
          : await this.db.execute(`INSERT INTO ${this.ks}.chat_heads (app_id, chat_id, seq, rev, writer) VALUES (?, ?, ?, ?, ?) IF NOT EXISTS`, [...key, to.seq, to.rev, writer]);
        if (applied(caught)) return;
        // Another writer changed the row in between: the next round compares with what it wrote.
        if (attempt >= MOVE_ATTEMPTS) throw new FencedError(appId, chatId, await this.withIndexes(appId, chatId, await this.head(appId, chatId, true)));
      } catch (error) {
        if (error instanceof FencedError || !timedOut(error)) throw error;
        if ((await this.head(appId, chatId, true))?.writer === writer) return;
        // Not applied: the next round finds the head as it is now, still `from` or moved by another writer.
        if (attempt >= MOVE_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 50));
      }
    }
  }

  /** The head given its row: the row's, or the indexes' where they are higher. */
  private async withIndexes(appId: string, chatId: string, row: ChatHead | undefined): Promise<ChatHead> {
    const [seq, rev] = await Promise.all([this.indexedLastSeq(appId, chatId), this.indexedLastRev(appId, chatId)]);
    return { seq: Math.max(row?.seq ?? 0, seq), rev: Math.max(row?.rev ?? 0, rev) };
  }

  private async head(appId: string, chatId: string, serial = false): Promise<(ChatHead & { writer?: string }) | undefined> {
    const options = serial ? { consistency: cassandra.types.consistencies.localSerial } : {};
    const row = (await this.db.execute(`SELECT seq, rev, writer FROM ${this.ks}.chat_heads WHERE app_id = ? AND chat_id = ?`, [appId, chatId], options)).first();
    return row ? { ...headOf(row)!, writer: opt(row, 'writer') } : undefined;
  }

  async get(appId: string, chatId: string, messageId: string): Promise<StoredMessage | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.messages WHERE app_id = ? AND chat_id = ? AND bucket = ? AND id = ?`, [appId, chatId, bucketOf(messageId), messageId])).first();
    return row ? this.read(row) : undefined;
  }

  async pageBackward(appId: string, chatId: string, beforeId: string | undefined, limit: number): Promise<StoredMessage[]> {
    const out: StoredMessage[] = [];
    const start = beforeId === undefined ? undefined : bucketOf(beforeId);
    // Non-empty buckets, newest first, a few at a time: empty days are never visited.
    let below: number | undefined;
    for (;;) {
      const buckets = below === undefined && start === undefined
        ? await this.db.execute(`SELECT bucket FROM ${this.ks}.message_buckets WHERE app_id = ? AND chat_id = ? LIMIT 8`, [appId, chatId])
        : below === undefined
          ? await this.db.execute(`SELECT bucket FROM ${this.ks}.message_buckets WHERE app_id = ? AND chat_id = ? AND bucket <= ? LIMIT 8`, [appId, chatId, start])
          : await this.db.execute(`SELECT bucket FROM ${this.ks}.message_buckets WHERE app_id = ? AND chat_id = ? AND bucket < ? LIMIT 8`, [appId, chatId, below]);
      if (buckets.rows.length === 0) return out;
      for (const b of buckets.rows) {
        const bucket = num(b, 'bucket');
        below = bucket;
        const want = limit - out.length;
        const rows = beforeId !== undefined && bucket === start
          ? await this.db.execute(`SELECT * FROM ${this.ks}.messages WHERE app_id = ? AND chat_id = ? AND bucket = ? AND id < ? LIMIT ?`, [appId, chatId, bucket, beforeId, want])
          : await this.db.execute(`SELECT * FROM ${this.ks}.messages WHERE app_id = ? AND chat_id = ? AND bucket = ? LIMIT ?`, [appId, chatId, bucket, want]);
        out.push(...rows.rows.map((r) => this.read(r)));
        if (out.length >= limit) return out;
      }
    }
  }

  /**
   * Messages named by index rows (bucket, id), in the index's order. `current` drops a message whose
   * row no longer matches its index row (a revision row left by a put that failed half-way).
   */
  private async resolve(rows: types.Row[], appId: string, chatId: string, current: (m: StoredMessage, index: types.Row) => boolean = () => true): Promise<StoredMessage[]> {
    const found = await Promise.all(rows.map(async (r) => {
      const row = (await this.db.execute(`SELECT * FROM ${this.ks}.messages WHERE app_id = ? AND chat_id = ? AND bucket = ? AND id = ?`, [appId, chatId, num(r, 'bucket'), str(r, 'id')])).first();
      const message = row ? this.read(row) : undefined;
      return message && current(message, r) ? message : undefined;
    }));
    return found.filter((m): m is StoredMessage => m !== undefined);
  }

  async afterSeq(appId: string, chatId: string, afterSeq: number, limit: number): Promise<StoredMessage[]> {
    const rows = await this.db.execute(`SELECT bucket, id FROM ${this.ks}.message_seqs WHERE app_id = ? AND chat_id = ? AND seq > ? LIMIT ?`, [appId, chatId, afterSeq, limit]);
    return this.resolve(rows.rows, appId, chatId);
  }

  /** The head's seq, or the index's where it is higher: a fenced put whose messages failed still took its numbers. */
  async lastSeq(appId: string, chatId: string): Promise<number> {
    const [head, indexed] = await Promise.all([this.head(appId, chatId), this.indexedLastSeq(appId, chatId)]);
    return Math.max(head?.seq ?? 0, indexed);
  }

  async lastRev(appId: string, chatId: string): Promise<number> {
    const [head, indexed] = await Promise.all([this.head(appId, chatId), this.indexedLastRev(appId, chatId)]);
    return Math.max(head?.rev ?? 0, indexed);
  }

  private async indexedLastSeq(appId: string, chatId: string): Promise<number> {
    const row = (await this.db.execute(`SELECT seq FROM ${this.ks}.message_seqs WHERE app_id = ? AND chat_id = ? ORDER BY seq DESC LIMIT 1`, [appId, chatId])).first();
    return row ? num(row, 'seq') : 0;
  }

  private async indexedLastRev(appId: string, chatId: string): Promise<number> {
    const row = (await this.db.execute(`SELECT rev FROM ${this.ks}.message_revs WHERE app_id = ? AND chat_id = ? ORDER BY rev DESC LIMIT 1`, [appId, chatId])).first();
    return row ? num(row, 'rev') : 0;
  }

  async changedSince(appId: string, chatId: string, afterRev: number, limit: number): Promise<StoredMessage[]> {
    const rows = await this.db.execute(`SELECT rev, bucket, id FROM ${this.ks}.message_revs WHERE app_id = ? AND chat_id = ? AND rev > ? LIMIT ?`, [appId, chatId, afterRev, limit]);
    return this.resolve(rows.rows, appId, chatId, (m, r) => (m.rev ?? 0) === num(r, 'rev'));
  }

  async byClientKey(appId: string, chatId: string, senderId: string, clientKey: string): Promise<StoredMessage | undefined> {
    const row = (await this.db.execute(`SELECT id FROM ${this.ks}.message_keys WHERE app_id = ? AND chat_id = ? AND sender_id = ? AND client_key = ?`, [appId, chatId, senderId, clientKey])).first();
    return row ? this.get(appId, chatId, str(row, 'id')) : undefined;
  }
}
