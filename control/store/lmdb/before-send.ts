import type { Database, RootDatabase } from 'lmdb';
import type { BeforeSendHook, BeforeSendStore } from '../types/before-send.ts';
import type { Key } from './shared.ts';

/** The embedded before-send hooks: ['h', app]. Each check and its write are one write transaction. */
export class LmdbBeforeSend implements BeforeSendStore {
  constructor(
    private readonly root: RootDatabase,
    private readonly db: Database<unknown, Key>,
  ) {}

  async get(appId: string): Promise<BeforeSendHook | undefined> {
    return this.db.get(['h', appId]) as BeforeSendHook | undefined;
  }

  create(hook: BeforeSendHook): Promise<'created' | 'exists'> {
    return this.root.transaction(() => {
      if (this.db.get(['h', hook.appId]) !== undefined) return 'exists' as const;
      this.db.put(['h', hook.appId], hook);
      return 'created' as const;
    });
  }

  update(hook: BeforeSendHook): Promise<'updated' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['h', hook.appId]) === undefined) return 'not-found' as const;
      this.db.put(['h', hook.appId], hook);
      return 'updated' as const;
    });
  }

  delete(appId: string): Promise<'deleted' | 'not-found'> {
    return this.root.transaction(() => {
      if (this.db.get(['h', appId]) === undefined) return 'not-found' as const;
      this.db.remove(['h', appId]);
      return 'deleted' as const;
    });
  }
}
