import { createHash } from 'node:crypto';
import { str, type Cql } from '../../../common/cassandra/index.ts';
import { addressIdentity, type PushAddress, type PushDevice, type PushDeviceStore } from '../types.ts';

const addressKey = (a: PushAddress) => createHash('sha256').update(addressIdentity(a)).digest('base64url');

/**
 * Push devices on Cassandra (migration node-024-push-devices): `push_devices`, a partition per
 * user (at most the caller's `max` rows), and `push_device_addresses`, each address's one owner.
 * A registration counts the user's devices, writes, and counts again: one that finds more than
 * `max` (a race with another registration) takes itself back and is refused, so the bound holds
 * once both return. An address moved from another user is removed from that user's devices.
 * `push_chat_mutes` (node-025-push-chat-mutes) holds the chats whose pushes a user turned off.
 */
export class CassandraPushDevices implements PushDeviceStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
  ) {}

  async register(device: PushDevice, max: number): Promise<{ result: 'created' | 'exists'; device: PushDevice } | { result: 'limit' }> {
    const { appId, userId } = device;
    const key = addressKey(device.address);
    const owner = (await this.db.execute(`SELECT user_id, device_id FROM ${this.ks}.push_device_addresses WHERE app_id = ? AND address_key = ?`, [appId, key])).first();
    const devices = await this.list(appId, userId);
    const known = owner && str(owner, 'user_id') === userId ? devices.find((d) => d.deviceId === str(owner, 'device_id')) : undefined;
    if (known) {
      const kept = { ...known, address: device.address };
      await this.write(kept);
      return { result: 'exists', device: kept };
    }
    if (devices.length >= max) return { result: 'limit' };
    await this.write(device);
    await this.db.execute(`INSERT INTO ${this.ks}.push_device_addresses (app_id, address_key, user_id, device_id) VALUES (?, ?, ?, ?)`, [appId, key, userId, device.deviceId]);
    if (owner && str(owner, 'user_id') !== userId) await this.db.execute(`DELETE FROM ${this.ks}.push_devices WHERE app_id = ? AND user_id = ? AND device_id = ?`, [appId, str(owner, 'user_id'), str(owner, 'device_id')]);
    if ((await this.list(appId, userId)).length > max) {
      await this.remove(appId, userId, device.deviceId);
      return { result: 'limit' };
    }
    return { result: 'created', device };
  }

  async list(appId: string, userId: string): Promise<PushDevice[]> {
    const rows = await this.db.execute(`SELECT device_id, address_json, created_at FROM ${this.ks}.push_devices WHERE app_id = ? AND user_id = ?`, [appId, userId]);
    return rows.rows
      .map((r) => ({ appId, userId, deviceId: str(r, 'device_id'), address: JSON.parse(str(r, 'address_json')) as PushAddress, createdAt: str(r, 'created_at') }))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.deviceId < b.deviceId ? -1 : 1));
  }

  async remove(appId: string, userId: string, deviceId: string): Promise<'removed' | 'not-found'> {
    const row = (await this.db.execute(`SELECT address_json FROM ${this.ks}.push_devices WHERE app_id = ? AND user_id = ? AND device_id = ?`, [appId, userId, deviceId])).first();
    if (!row) return 'not-found';
    await this.db.execute(`DELETE FROM ${this.ks}.push_devices WHERE app_id = ? AND user_id = ? AND device_id = ?`, [appId, userId, deviceId]);
    const key = addressKey(JSON.parse(str(row, 'address_json')) as PushAddress);
    const owner = (await this.db.execute(`SELECT user_id, device_id FROM ${this.ks}.push_device_addresses WHERE app_id = ? AND address_key = ?`, [appId, key])).first();
    if (owner && str(owner, 'user_id') === userId && str(owner, 'device_id') === deviceId) await this.db.execute(`DELETE FROM ${this.ks}.push_device_addresses WHERE app_id = ? AND address_key = ?`, [appId, key]);
    return 'removed';
  }

  async chatMuted(appId: string, userId: string, chatId: string): Promise<boolean> {
    const rows = await this.db.execute(`SELECT chat_id FROM ${this.ks}.push_chat_mutes WHERE app_id = ? AND user_id = ? AND chat_id = ?`, [appId, userId, chatId]);
    return rows.rowLength > 0;
  }

  async muteChat(appId: string, userId: string, chatId: string, muted: boolean): Promise<void> {
    await this.db.execute(
      muted ? `INSERT INTO ${this.ks}.push_chat_mutes (app_id, user_id, chat_id) VALUES (?, ?, ?)` : `DELETE FROM ${this.ks}.push_chat_mutes WHERE app_id = ? AND user_id = ? AND chat_id = ?`,
      [appId, userId, chatId],
    );
  }

  private async write(d: PushDevice): Promise<void> {
    await this.db.execute(`INSERT INTO ${this.ks}.push_devices (app_id, user_id, device_id, address_json, created_at) VALUES (?, ?, ?, ?, ?)`, [d.appId, d.userId, d.deviceId, JSON.stringify(d.address), d.createdAt]);
  }
}
