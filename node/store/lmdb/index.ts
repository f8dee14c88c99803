import { LmdbPushDevices } from './push.ts';
import { open, type RootDatabase } from 'lmdb';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../../common/files/index.ts';
import { KeyRotationConflict, rotatedKeys, type SigningKey } from '../../../common/jwt/index.ts';
import type { NodeSigningKeyStore, NodeStore, NodeStoreOptions, OutboxEvent, StoreWriteStats, WriterId } from '../types.ts';
import { LmdbChats } from './chats.ts';
import { LmdbFlags } from './flags.ts';
import { LmdbMessages } from './messages.ts';
import { LmdbModeration } from './moderation.ts';
import { LmdbOutbox } from './outbox.ts';
import { LmdbSearch } from './search.ts';
import { LmdbThreads } from './threads.ts';
import { values, type Key, type Tables } from './shared.ts';
import { LmdbUserSessions, LmdbUsers } from './users.ts';
import { LmdbWriters } from './writers.ts';

class LmdbNodeSigningKeys implements NodeSigningKeyStore {
  constructor(private readonly t: Tables) {}
  ensure(candidate: SigningKey): Promise<SigningKey> {
    return this.t.root.transaction(() => {
      const existing = [...values<SigningKey>(this.t.db, ['k'])][0];
      if (existing) return existing;
      this.t.db.put(['k', candidate.createdAt, candidate.kid], candidate);
      return candidate;
    });
  }
  async list(): Promise<SigningKey[]> {
    return [...values<SigningKey>(this.t.db, ['k'])];
  }
  // One write transaction: it reads and writes the keys alone, so no rotation ever conflicts here.
  async rotate(next: SigningKey, retireAt: string): Promise<void> {
    const done = await this.t.root.transaction(() => {
      const keys = [...values<SigningKey>(this.t.db, ['k'])];
      if (keys.some((k) => k.kid === next.kid)) return false;
      for (const k of rotatedKeys(keys, next, retireAt)) this.t.db.put(['k', k.createdAt, k.kid], k);
      return true;
    });
    if (!done) throw new KeyRotationConflict();
  }
}

export interface LmdbNodeStoreOptions extends NodeStoreOptions {
  /** Messages per transaction of the search backfill (BACKFILL_CHUNK by default). */
  searchBackfillChunk?: number;
  /** Search postings held in memory before they are written (FLUSH_POSTINGS by default). */
  searchWritePostings?: number;
}

/** The embedded node store: one LMDB environment, a named database per table family. */
export class LmdbNodeStore implements NodeStore {
  readonly users: LmdbUsers;
  readonly moderation: LmdbModeration;
  readonly flags: LmdbFlags;
  readonly userSessions: LmdbUserSessions;
  readonly chats: LmdbChats;
  readonly messages: LmdbMessages;
  readonly threads: LmdbThreads;
  readonly search: LmdbSearch;
  readonly outbox: LmdbOutbox;
  readonly writers: LmdbWriters;
  readonly signingKeys: LmdbNodeSigningKeys;
  readonly push: LmdbPushDevices;

  private constructor(private readonly root: RootDatabase, path: string, writer: WriterId | undefined, options: LmdbNodeStoreOptions) {
    const table = (name: string): Tables => ({ root, db: root.openDB<unknown, Key>({ name, encoding: 'msgpack' }) });
    this.writers = new LmdbWriters(path, writer);
    this.outbox = new LmdbOutbox(table('webhook_outbox'));
    // Inside the change's transaction: its events are in this node's outbox, or neither is written
    // (LmdbOutbox.write keeps no checks: a recovery has nothing to check).
    const events = (list: OutboxEvent[] | undefined) => {
      if (list?.length) this.outbox.write(this.writers.self.id, list, true);
    };
    this.users = new LmdbUsers(table('users'), events);
    this.userSessions = new LmdbUserSessions(table('user_sessions'));
    this.moderation = new LmdbModeration(table('moderation'));
    this.flags = new LmdbFlags(table('flags'));
    this.chats = new LmdbChats(table('chats'), this.writers, events);
    this.chats.upgrade();
    // Its own table, written in the messages' transactions (one environment).
    const messages = table('messages');
    this.search = new LmdbSearch(table('search'), (appId, logId, id) => this.messages.stored(appId, logId, id), options.searchIndex ?? true, messages.db, { backfillChunk: options.searchBackfillChunk, writePostings: options.searchWritePostings });
    this.messages = new LmdbMessages(messages, this.writers, this.outbox, this.search);
    this.threads = new LmdbThreads(table('threads'));
    this.signingKeys = new LmdbNodeSigningKeys(table('signing_keys'));
    this.push = new LmdbPushDevices(table('push_devices'));
    // Messages stored before the index (or while it was off) are indexed in the background, from
    // where an earlier run stopped; unless that is complete (LmdbSearch.backfill).
    this.search.startBackfill();
  }

  /** `writer` names this instance when it holds a chat another instance on the same path wants (see ChatWriters). */
  /** Opens (or creates) the environment in directory `path`: see LmdbControlStore.open for the file modes. */
  static open(path: string, writer?: WriterId, options: LmdbNodeStoreOptions = {}): LmdbNodeStore {
    ensurePrivateDir(path);
    // A write resolves only once it is synced to disk (lmdb's default, overlapping sync, resolves at
    // commit and syncs later): an acknowledged write survives power loss, not just a crash.
    // `permissionsMode` (the mode of data.mdb and lock.mdb) is read by lmdb but absent from its typings.
    // `trackMetrics`: LMDB counts its transactions, pages written and time in them (writeStats).
    const lmdbOptions = { path, maxDbs: 16, trackMetrics: true, compression: false, overlappingSync: false, permissionsMode: PRIVATE_FILE_MODE };
    return new LmdbNodeStore(open(lmdbOptions), path, writer, options);
  }

  /** From LMDB's own counters (the environment is opened with `trackMetrics`). */
  writeStats(): StoreWriteStats {
    const s = this.root.getStats() as { txns?: number; pagesWritten?: number; timeDuringTxns?: number };
    return { transactions: s.txns ?? 0, pagesWritten: s.pagesWritten ?? 0, transactionSeconds: s.timeDuringTxns ?? 0 };
  }

  async close(): Promise<void> {
    this.writers.releaseAll();
    await this.search.close();
    await this.root.close();
  }
}
