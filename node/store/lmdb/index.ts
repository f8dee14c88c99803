import { open, type RootDatabase } from 'lmdb';
import type { SigningKey } from '../../../common/index.ts';
import type { NodeSigningKeyStore, NodeStore, WriterId } from '../types.ts';
import { LmdbChats } from './chats.ts';
import { LmdbMessages } from './messages.ts';
import { values, type Key, type Tables } from './shared.ts';
import { LmdbUserSessions, LmdbUsers } from './users.ts';
import { LmdbWriters } from './writers.ts';

class LmdbNodeSigningKeys implements NodeSigningKeyStore {
  constructor(private readonly t: Tables) {}
  ensure(candidate: SigningKey): Promise<SigningKey> {
    return this.t.root.transaction(() => {
      const existing = [...values<SigningKey>(this.t.db, ['k'])].at(-1);
      if (existing) return existing;
      this.t.db.put(['k', candidate.createdAt, candidate.kid], candidate);
      return candidate;
    });
  }
  async list(): Promise<SigningKey[]> {
    return [...values<SigningKey>(this.t.db, ['k'])];
  }
}

/** The embedded node store: one LMDB environment, a named database per table family. */
export class LmdbNodeStore implements NodeStore {
  readonly users: LmdbUsers;
  readonly userSessions: LmdbUserSessions;
  readonly chats: LmdbChats;
  readonly messages: LmdbMessages;
  readonly writers: LmdbWriters;
  readonly signingKeys: LmdbNodeSigningKeys;

  private constructor(private readonly root: RootDatabase, path: string, writer?: WriterId) {
    const table = (name: string): Tables => ({ root, db: root.openDB<unknown, Key>({ name, encoding: 'msgpack' }) });
    this.users = new LmdbUsers(table('users'));
    this.userSessions = new LmdbUserSessions(table('user_sessions'));
    this.writers = new LmdbWriters(path, writer);
    this.chats = new LmdbChats(table('chats'), this.writers);
    this.messages = new LmdbMessages(table('messages'), this.writers);
    this.signingKeys = new LmdbNodeSigningKeys(table('signing_keys'));
  }

  /** `writer` names this instance when it holds a chat another instance on the same path wants (see ChatWriters). */
  static open(path: string, writer?: WriterId): LmdbNodeStore {
    // A write resolves only once it is synced to disk (lmdb's default, overlapping sync, resolves at
    // commit and syncs later): an acknowledged write survives power loss, not just a crash.
    return new LmdbNodeStore(open({ path, maxDbs: 16, compression: false, overlappingSync: false }), path, writer);
  }

  async close(): Promise<void> {
    this.writers.releaseAll();
    await this.root.close();
  }
}
