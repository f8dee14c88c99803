import cassandra, { type types } from 'cassandra-driver';
import { defined, num, opt, str, type BatchStatement } from '../../../common/cassandra/index.ts';
import type { StoredAttachment, StoredMessage, StoredReaction, ThreadSummary } from '../types.ts';
import { chatOfLog } from '../thread-log.ts';
import { indexed } from '../search-terms.ts';
import type { SearchRows } from './search.ts';

/** Seqs (and revisions) per partition of `chat_messages` (and `message_changes`): a partition's bound. */
export const BLOCK = 1024;
export const blockOf = (n: number) => Math.floor(n / BLOCK);

const { unset } = cassandra.types;

/** A row of `chat_messages`, with the revision of the message's first write when it was recorded. */
export interface MessageRow {
  message: StoredMessage;
  crev: number | undefined;
}

export function readMessage(row: types.Row): MessageRow {
  const message = defined({
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
    hiddenAt: opt(row, 'hidden_at'),
    rev: row.get('rev') === null ? undefined : num(row, 'rev'),
    attachments: attachmentsOf(opt(row, 'attachments')),
    mentions: mentionsOf(opt(row, 'mentions')),
    parentId: opt(row, 'parent_id'),
    thread: threadOf(opt(row, 'thread')),
    copySeq: row.get('copy_seq') === null || row.get('copy_seq') === undefined ? undefined : num(row, 'copy_seq'),
    type: opt(row, 'type') === 'system' ? ('system' as const) : undefined,
    data: jsonOf(opt(row, 'data')),
  });
  return { message, crev: row.get('crev') === null || row.get('crev') === undefined ? undefined : num(row, 'crev') };
}

const attachmentsOf = (json: string | undefined) => (json === undefined ? undefined : (JSON.parse(json) as StoredAttachment[]));
const threadOf = (json: string | undefined) => (json === undefined ? undefined : (JSON.parse(json) as ThreadSummary));
const mentionsOf = (json: string | undefined) => (json === undefined ? undefined : (JSON.parse(json) as string[]));
const jsonOf = (json: string | undefined) => (json === undefined ? undefined : (JSON.parse(json) as Record<string, unknown>));

/**
 * The statements that write messages of one put. A new message (`created`) is one row, plus its
 * idempotency key when it has one, plus an id row when its id does not carry its seq. A changed
 * message rewrites its row, indexes its revision in `message_changes` and deletes the index row of
 * its previous revision (when that was a change too). New rows leave absent fields unset, so they
 * write no tombstones; a rewrite clears them.
 */
export class MessageWrites {
  readonly rows = new Map<number, BatchStatement[]>();
  readonly others: BatchStatement[] = [];
  /** The search index's rows (search.ts): they need no atomicity with the rest, so they travel apart (put-merger.ts). */
  readonly indexRows: BatchStatement[] = [];
  /** The search rows this put writes that SearchRows remembers once it succeeded. */
  readonly searchKeys = new Set<string>();

  constructor(
    private readonly ks: string,
    /** The search index's rows (none in migrations that run before its tables exist). */
    private readonly search?: SearchRows,
  ) {}

  private index(m: StoredMessage): void {
    if (!this.search) return;
    this.indexRows.push(...this.search.of(m, this.searchKeys));
  }

  private row(m: StoredMessage, crev: number | undefined, rewrite: boolean): BatchStatement {
    const absent = rewrite ? null : unset;
    // `hidden_at` (migration node-013) only where it can be set or cleared: a new message is never
    // hidden, and the copy of the first layout (migration node-005) runs before the column exists.
    const hidden = rewrite || m.hiddenAt !== undefined;
    // `attachments` (migration node-016, JSON) likewise: only where a message has some or is rewritten.
    const files = rewrite || m.attachments !== undefined;
    // `type` and `data` (migration node-017) likewise, and `mentions` (node-018).
    const custom = rewrite || m.type !== undefined || m.data !== undefined;
    const mentions = rewrite || m.mentions !== undefined;
    // `parent_id`, `thread` and `copy_seq` (node-019) likewise.
    const threads = rewrite || m.parentId !== undefined || m.thread !== undefined;
    return {
      query: `INSERT INTO ${this.ks}.chat_messages (app_id, chat_id, block, seq, id, sender_id, content, created_at, edited_at, deleted_at, reply_to_id, reactions, client_key, rev, crev${hidden ? ', hidden_at' : ''}${files ? ', attachments' : ''}${custom ? ', type, data' : ''}${mentions ? ', mentions' : ''}${threads ? ', parent_id, thread, copy_seq' : ''}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?${hidden ? ', ?' : ''}${files ? ', ?' : ''}${custom ? ', ?, ?' : ''}${mentions ? ', ?' : ''}${threads ? ', ?, ?, ?' : ''})`,
      params: [
        m.appId, m.chatId, blockOf(m.seq), m.seq, m.id, m.senderId, m.content, m.createdAt,
        m.editedAt ?? absent, m.deletedAt ?? absent, m.replyToId ?? absent, JSON.stringify(m.reactions), m.clientKey ?? absent, m.rev ?? absent,
        crev ?? unset,
        ...(hidden ? [m.hiddenAt ?? absent] : []),
        ...(files ? [m.attachments === undefined ? absent : JSON.stringify(m.attachments)] : []),
        ...(custom ? [m.type ?? absent, m.data === undefined ? absent : JSON.stringify(m.data)] : []),
        ...(mentions ? [m.mentions === undefined ? absent : JSON.stringify(m.mentions)] : []),
        ...(threads ? [m.parentId ?? absent, m.thread === undefined ? absent : JSON.stringify(m.thread), m.copySeq ?? absent] : []),
      ],
    };
  }

  private addRow(m: StoredMessage, statement: BatchStatement): void {
    const block = blockOf(m.seq);
    const list = this.rows.get(block);
    if (list) list.push(statement);
    else this.rows.set(block, [statement]);
  }

  /** A message's first write; `crev` is the revision it was created at. */
  created(m: StoredMessage, crev: number | undefined, idCarriesSeq: boolean): void {
    this.addRow(m, this.row(m, crev, false));
    this.indexes(m, idCarriesSeq);
    if (indexed(m, undefined)) this.index(m);
    // Created and changed within one put: its latest revision is a change.
    if (m.rev !== undefined && m.rev !== crev) this.others.push(this.change(m, m.rev));
  }

  /** A later write of a message; `previous` is its stored row, if any. */
  changed(m: StoredMessage, previous: MessageRow | undefined, idCarriesSeq: boolean): void {
    this.addRow(m, this.row(m, previous?.crev, true));
    if (indexed(m, previous?.message)) this.index(m);
    if (!previous) this.indexes(m, idCarriesSeq);
    else if (m.deletedAt !== undefined) this.mentions(m);
    const before = previous?.message.rev;
    if (m.rev !== undefined && before !== m.rev) {
      this.others.push(this.change(m, m.rev));
      if (before !== undefined && before !== previous?.crev) {
        this.others.push({ query: `DELETE FROM ${this.ks}.message_changes WHERE app_id = ? AND chat_id = ? AND block = ? AND rev = ?`, params: [m.appId, m.chatId, blockOf(before), before] });
      }
    }
  }

  private change(m: StoredMessage, rev: number): BatchStatement {
    return { query: `INSERT INTO ${this.ks}.message_changes (app_id, chat_id, block, rev, seq) VALUES (?, ?, ?, ?, ?)`, params: [m.appId, m.chatId, blockOf(rev), rev, m.seq] };
  }

  private indexes(m: StoredMessage, idCarriesSeq: boolean): void {
    if (!idCarriesSeq) this.others.push({ query: `INSERT INTO ${this.ks}.message_ids (app_id, chat_id, id, seq) VALUES (?, ?, ?, ?)`, params: [m.appId, m.chatId, m.id, m.seq] });
    if (m.clientKey !== undefined) {
      this.others.push({ query: `INSERT INTO ${this.ks}.send_keys (app_id, chat_id, sender_id, client_key, seq, id) VALUES (?, ?, ?, ?, ?, ?)`, params: [m.appId, m.chatId, m.senderId, m.clientKey, m.seq, m.id] });
    }
    for (const a of m.attachments ?? []) {
      // A reply's files are held in its chat's name, as a message of the chat's are (thread-log.ts).
      this.others.push({ query: `INSERT INTO ${this.ks}.attachment_holders (app_id, chat_id, upload_id, message_id) VALUES (?, ?, ?, ?)`, params: [m.appId, chatOfLog(m.chatId), a.id, m.id] });
    }
    this.mentions(m);
  }

  /** A stored message's mentions are indexed; a tombstone's are dropped (idempotent both ways). */
  private mentions(m: StoredMessage): void {
    for (const userId of m.mentions ?? []) {
      const key = [m.appId, m.chatId, userId, blockOf(m.seq), m.seq];
      this.others.push(
        m.deletedAt === undefined
          ? { query: `INSERT INTO ${this.ks}.chat_mentions (app_id, chat_id, user_id, block, seq) VALUES (?, ?, ?, ?, ?)`, params: key }
          : { query: `DELETE FROM ${this.ks}.chat_mentions WHERE app_id = ? AND chat_id = ? AND user_id = ? AND block = ? AND seq = ?`, params: key },
      );
    }
  }

  /**
   * The batches to send: one per `chat_messages` partition (single-partition batches are one
   * mutation each and have no size limit), and the other rows in batches of at most `chunk`
   * statements (several partitions each: they stay well under Cassandra's batch size limits);
   * with `index`, the search index's rows too (else they are `indexRows`, to send apart).
   */
  batches(options: { index: boolean }, chunk = 32): BatchStatement[][] {
    const out = [...this.rows.values()];
    const others = options.index ? [...this.others, ...this.indexRows] : this.others;
    for (let i = 0; i < others.length; i += chunk) out.push(others.slice(i, i + chunk));
    return out;
  }
}
