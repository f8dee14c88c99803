import { createHash } from 'node:crypto';
import { addressIdentity, type PushDevice, type PushDeviceStore } from '../types.ts';
import { values, type Tables } from './shared.ts';

/** An address's key: a hash, as a Web Push endpoint may be longer than LMDB's keys. */
const addressKey = (d: Pick<PushDevice, 'address'>) => createHash('sha256').update(addressIdentity(d.address)).digest('base64url');

/**
 * The embedded push devices: ['d', app, user, deviceId] → the device; ['a', app, addressKey] →
 * [user, deviceId], the address's one owner; ['m', app, user, chatId] → true, a chat whose pushes
 * the user turned off. A registration (its count, its move from another user) is one write
 * transaction.
 */
export class LmdbPushDevices implements PushDeviceStore {
  constructor(private readonly t: Tables) {}

  register(device: PushDevice, max: number): Promise<{ result: 'created' | 'exists'; device: PushDevice } | { result: 'limit' }> {
    const { root, db } = this.t;
    const { appId, userId } = device;
    return root.transaction(() => {
      const owner = db.get(['a', appId, addressKey(device)]) as [string, string] | undefined;
      if (owner && owner[0] === userId) {
        const known = db.get(['d', appId, userId, owner[1]]) as PushDevice | undefined;
        if (known) {
          const kept = { ...known, address: device.address };
          db.put(['d', appId, userId, known.deviceId], kept);
          return { result: 'exists' as const, device: kept };
        }
      }
      if ([...values<PushDevice>(db, ['d', appId, userId])].length >= max) return { result: 'limit' as const };
      // Another user's before: it is this user's now.
      if (owner) db.remove(['d', appId, owner[0], owner[1]]);
      db.put(['d', appId, userId, device.deviceId], device);
      db.put(['a', appId, addressKey(device)], [userId, device.deviceId]);
      return { result: 'created' as const, device };
    });
  }

  async list(appId: string, userId: string): Promise<PushDevice[]> {
    return [...values<PushDevice>(this.t.db, ['d', appId, userId])].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.deviceId < b.deviceId ? -1 : 1));
  }

  remove(appId: string, userId: string, deviceId: string): Promise<'removed' | 'not-found'> {
    const { root, db } = this.t;
    return root.transaction(() => {
      const device = db.get(['d', appId, userId, deviceId]) as PushDevice | undefined;
      if (!device) return 'not-found' as const;
      db.remove(['d', appId, userId, deviceId]);
      const owner = db.get(['a', appId, addressKey(device)]) as [string, string] | undefined;
      if (owner && owner[0] === userId && owner[1] === deviceId) db.remove(['a', appId, addressKey(device)]);
      return 'removed' as const;
    });
  }

  async chatMuted(appId: string, userId: string, chatId: string): Promise<boolean> {
    return this.t.db.get(['m', appId, userId, chatId]) === true;
  }

  async muteChat(appId: string, userId: string, chatId: string, muted: boolean): Promise<void> {
    await (muted ? this.t.db.put(['m', appId, userId, chatId], true) : this.t.db.remove(['m', appId, userId, chatId]));
  }
}
