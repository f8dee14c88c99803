import { CassandraPushDevices } from './push.ts';
import { randomUUID } from 'node:crypto';
import { CassandraSigningKeys, cql, type Cql } from '../../../common/cassandra/index.ts';
import type { NodeStore, NodeStoreOptions, WriterId } from '../types.ts';
import { CassandraChats } from './chats.ts';
import { CassandraLeases, type HoldTiming } from './leases.ts';
import { CassandraMessages } from './messages.ts';
import { CassandraFlags } from './flags.ts';
import { CassandraModeration } from './moderation.ts';
import { PutMerger } from './put-merger.ts';
import { CassandraOutbox, ChangeEvents } from './outbox.ts';
import { CassandraThreads } from './threads.ts';
import { CassandraSearch, SearchRows } from './search.ts';
import { CassandraUsers, CassandraUserSessions } from './users.ts';
export { nodeMigrations } from './schema.ts';
export { HOLD, type HoldTiming } from './leases.ts';

/**
 * The node store on Cassandra or ScyllaDB (same CQL), over a keyspace migrated with
 * `nodeMigrations`. Every statement is prepared, at LOCAL_QUORUM, with LOCAL_SERIAL for its
 * compare-and-sets (see common/cassandra/client.ts). The client is the caller's: several stores
 * may share it, and closing the store does not close it.
 */
export class CassandraNodeStore implements NodeStore {
  readonly users: CassandraUsers;
  readonly moderation: CassandraModeration;
  readonly flags: CassandraFlags;
  readonly userSessions: CassandraUserSessions;
  readonly chats: CassandraChats;
  readonly messages: CassandraMessages;
  readonly threads: CassandraThreads;
  readonly push: CassandraPushDevices;
  readonly search: CassandraSearch;
  readonly outbox: CassandraOutbox;
  readonly writers: CassandraLeases;
  /** The keys that sign user JWTs and make the cluster key, shared by every node (scope `node`). */
  readonly signingKeys: CassandraSigningKeys;

  /**
   * The store over `keyspace`; the schema must already be migrated (see `nodeMigrations`). The
   * client is a driver Client, or anything with its `execute` and `batch`. `writer` names this
   * instance to the others when it holds a chat (a random id by default): each instance is a writer
   * of its own.
   */
  static open(client: Cql, keyspace: string, writer?: WriterId, hold?: HoldTiming, options: NodeStoreOptions = {}): CassandraNodeStore {
    return new CassandraNodeStore(client, keyspace, writer, hold, options);
  }

  constructor(client: Cql, keyspace: string, writer: WriterId = { id: randomUUID() }, hold?: HoldTiming, options: NodeStoreOptions = {}) {
    // The keyspace is spliced into every statement's text (identifiers cannot be bound).
    if (!/^[a-z][a-z0-9_]{0,47}$/.test(keyspace)) throw new Error(`invalid keyspace name ${keyspace}`);
    const db = cql(client);
    this.writers = new CassandraLeases(db, keyspace, writer, hold);
    this.outbox = new CassandraOutbox(db, keyspace);
    const events = new ChangeEvents(this.outbox, () => this.writers.self.id);
    this.users = new CassandraUsers(db, keyspace, events);
    this.userSessions = new CassandraUserSessions(db, keyspace);
    this.moderation = new CassandraModeration(db, keyspace);
    this.flags = new CassandraFlags(db, keyspace);
    this.chats = new CassandraChats(db, keyspace, this.writers, events);
    this.messages = new CassandraMessages(db, keyspace, this.writers, this.outbox, new PutMerger(db), new SearchRows(keyspace, options.searchIndex ?? true));
    this.threads = new CassandraThreads(db, keyspace);
    this.push = new CassandraPushDevices(db, keyspace);
    this.search = new CassandraSearch(db, keyspace);
    this.signingKeys = new CassandraSigningKeys(db, keyspace, 'node', 'node');
  }

  writeStats(): undefined {
    return undefined;
  }

  async close(): Promise<void> {
    // The client belongs to the caller; the chats this instance holds are handed back.
    await this.writers.releaseAll();
  }
}
