import { open, type RootDatabase } from 'lmdb';
import type { SigningKey } from '../../../common/index.ts';
import type { NodeSigningKeyStore, NodeStore } from '../types.ts';
import { LmdbChats } from './chats.ts';
import { LmdbMessages } from './messages.ts';
import { values, type Key, type Tables } from './shared.ts';
import { LmdbUserSessions, LmdbUsers } from './users.ts';

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
  readonly signingKeys: LmdbNodeSigningKeys;

  private constructor(private readonly root: RootDatabase) {
    const table = (name: string): Tables => ({ root, db: root.openDB<unknown, Key>({ name, encoding: 'msgpack' }) });
    this.users = new LmdbUsers(table('users'));
    this.userSessions = new LmdbUserSessions(table('user_sessions'));
    this.chats = new LmdbChats(table('chats'));
    this.messages = new LmdbMessages(table('messages'));
    this.signingKeys = new LmdbNodeSigningKeys(table('signing_keys'));
  }

  static open(path: string): LmdbNodeStore {
    // A write resolves only once it is synced to disk (lmdb's default, overlapping sync, resolves at
    // commit and syncs later): an acknowledged write survives power loss, not just a crash.
    return new LmdbNodeStore(open({ path, maxDbs: 16, compression: false, overlappingSync: false }));
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}
