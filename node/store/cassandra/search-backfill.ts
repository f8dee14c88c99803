import cassandra from 'cassandra-driver';
import { asUnavailable, cql, num, STATEMENT_OPTIONS, type BatchStatement, type CassandraClient, type Cql } from '../../../common/cassandra/index.ts';
import { BackendUnavailableError } from '../../../common/errors/index.ts';
import { indexed } from '../search-terms.ts';
import { readMessage } from './message-rows.ts';
import { SearchRows } from './search.ts';

const { Long } = cassandra.types;

/** Messages whose rows are in flight while indexing: enough to keep Cassandra busy, bounded in memory. */
const IN_FLIGHT = 32;
/** Statements per batch (of several partitions: well under Cassandra's batch size limits). */
const BATCH = 32;
/** Tries of a stretch of the table (from the last save) while the database is down or slow. */
const RETRIES = 5;
/** Rows read between two saves of the progress (at the next partition's first row). */
export const CHECKPOINT_ROWS = 500;
/**
 * The progress row's name in `search_backfill`: node-026's run. Earlier runs' rows (node-022's
 * `chat_messages`, node-023's `hour_postings`) wrote layouts since changed.
 */
const NAME = 'day_hours';
/** Below every token of Murmur3Partitioner (no key has it): `token > MIN` is every partition. */
const MIN_TOKEN = Long.MIN_VALUE;
/** Every column `readMessage` reads. */
const COLUMNS =
  'app_id, chat_id, block, seq, id, sender_id, content, created_at, edited_at, deleted_at, reply_to_id, reactions, client_key, rev, crev, hidden_at, attachments, type, data, mentions, parent_id, thread, copy_seq';

export interface SearchBackfillProgress {
  /** Messages indexed since the backfill began (over every run; a message indexed twice counts twice). */
  messages: number;
  /** Messages this run indexed. */
  messagesNow: number;
  /** The token of the last partition done (decimal), or undefined before the first. */
  lastToken: string | undefined;
  /** Whether every partition was read. */
  done: boolean;
  /** Whether this run went on from a token an earlier run saved. */
  resumed: boolean;
}

export interface SearchBackfillOptions {
  /** Called at each save of the progress, and at the end. */
  onProgress?: (progress: SearchBackfillProgress) => void;
  /** Rows read between two saves (CHECKPOINT_ROWS by default). */
  checkpointRows?: number;
  /** Stops at the first save after this many messages were indexed by this run (the rest is left for the next run). */
  limit?: number;
  /** Stops at the next save once aborted. */
  signal?: AbortSignal;
}

/**
 * Migration node-026: puts every message of `chat_messages` written before the search index
 * existed (or while SEARCH_INDEX=off) into it, as a put of the message writes its rows (SearchRows);
 * deleted messages and messages without text are skipped. It streams the table in token order
 * (paged), with the writes of at most IN_FLIGHT messages in flight, and every CHECKPOINT_ROWS rows, once every
 * write of the partitions read so far succeeded, saves the token of the last whole partition and
 * the count in `search_backfill`: a run interrupted (a process killed, Cassandra failing) goes on
 * from that token at the next run, re-indexing at most the rows read since the save (postings are
 * upserts: a message indexed twice is one row). Once done, later runs read nothing.
 *
 * It reads the whole table: for a large keyspace, run `npm run schema` before the nodes of this
 * version start, rather than letting the first node do it at start.
 */
export async function backfillSearch(client: CassandraClient, ks: string, options: SearchBackfillOptions = {}): Promise<SearchBackfillProgress> {
  const db = cql(client);
  const stored = (await db.execute(`SELECT last_token, messages, done FROM ${ks}.search_backfill WHERE name = ?`, [NAME])).first();
  const progress: SearchBackfillProgress = {
    messages: stored ? num(stored, 'messages') : 0,
    messagesNow: 0,
    lastToken: stored?.get('last_token') == null ? undefined : String(stored.get('last_token')),
    done: stored?.get('done') === true,
    resumed: false,
  };
  if (progress.done) return progress;
  progress.resumed = progress.lastToken !== undefined;

  const rows = new SearchRows(ks, true);
  const pending = new Set<Promise<unknown>>();
  let failed: unknown;
  // A message's statements, in batches; its rows are remembered as written once all of them are.
  const send = async (statements: BatchStatement[], keys: Set<string>) => {
    const batches: Promise<unknown>[] = [];
    for (let i = 0; i < statements.length; i += BATCH) batches.push(db.batch(statements.slice(i, i + BATCH)));
    const write = Promise.all(batches).then(
      () => rows.landed(keys),
      (error: unknown) => void (failed ??= error),
    );
    pending.add(write);
    void write.finally(() => pending.delete(write));
    if (pending.size >= IN_FLIGHT) await Promise.race(pending);
  };
  // What the last save wrote: where a run, or a read tried again, goes on from.
  let saved = { token: progress.lastToken === undefined ? MIN_TOKEN : Long.fromString(progress.lastToken), messages: progress.messages, messagesNow: 0 };
  const save = async (token: cassandra.types.Long, done: boolean) => {
    // Only once every write of the rows read so far succeeded: the saved token is never ahead of the index.
    await Promise.all(pending);
    if (failed !== undefined) throw failed;
    await db.execute(`INSERT INTO ${ks}.search_backfill (name, last_token, messages, done) VALUES (?, ?, ?, ?)`, [NAME, token, progress.messages, done]);
    saved = { token, messages: progress.messages, messagesNow: progress.messagesNow };
    progress.lastToken = token.toString();
    progress.done = done;
    options.onProgress?.({ ...progress });
  };

  const every = options.checkpointRows ?? CHECKPOINT_ROWS;
  const query = `SELECT token(app_id, chat_id, block) AS tk, ${COLUMNS} FROM ${ks}.chat_messages WHERE token(app_id, chat_id, block) > ?`;
  const paged = { ...STATEMENT_OPTIONS, fetchSize: 500, autoPage: true };
  for (let attempt = 1; ; attempt++) {
    // The token of the partition whose rows are being read.
    let current: cassandra.types.Long | undefined;
    let sinceSave = 0;
    try {
      for await (const row of client.stream(query, [saved.token], paged) as unknown as AsyncIterable<cassandra.types.Row>) {
        const token = row.get('tk') as cassandra.types.Long;
        // The partition of `current` is read whole once the next token begins (partitions come in
        // token order, and partitions sharing a token come one after another).
        if (current !== undefined && !token.equals(current) && sinceSave >= every) {
          await save(current, false);
          sinceSave = 0;
          attempt = 1;
          if ((options.limit !== undefined && progress.messagesNow >= options.limit) || options.signal?.aborted) return progress;
        }
        current = token;
        sinceSave++;
        const { message } = readMessage(row);
        if (!indexed(message, undefined)) continue;
        const keys = new Set<string>();
        await send(rows.of(message, keys), keys);
        progress.messages++;
        progress.messagesNow++;
      }
      await save(current ?? saved.token, true);
      return progress;
    } catch (error) {
      // The database down or slow (a page read, a write): read again from the last save, a few
      // times; anything else, or too many times, fails the run (the next goes on from that save).
      if (!(asUnavailable(error) instanceof BackendUnavailableError) || attempt >= RETRIES) throw error;
      await Promise.all(pending);
      failed = undefined;
      progress.messages = saved.messages;
      progress.messagesNow = saved.messagesNow;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

/**
 * The backfill again from the first partition (`npm run schema -- reindex`): for messages written
 * while SEARCH_INDEX=off, which the migration's run did not see. The progress row is reset first,
 * so a run interrupted goes on from its own saves as the migration does.
 */
export async function reindexSearch(client: CassandraClient, ks: string, options: SearchBackfillOptions = {}): Promise<SearchBackfillProgress> {
  const db: Cql = cql(client);
  await db.execute(`INSERT INTO ${ks}.search_backfill (name, last_token, messages, done) VALUES (?, ?, ?, ?)`, [NAME, null, 0, false]);
  return backfillSearch(client, ks, options);
}
