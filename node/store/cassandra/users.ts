import { randomUUID } from 'node:crypto';
import cassandra from 'cassandra-driver';
import { applied, claimRow, dataOf, dataText, defined, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import type { ChatUser, EventOptions, UserRefreshToken, UserRotateResult, UserSessionFamily, UserSessionStore, UserStore } from '../types.ts';
import type { ChangeEvents } from './outbox.ts';


const { unset } = cassandra.types;
/**
 * Users; a username is claimed with a compare-and-set on (app, username), so two creates never
 * share it. Webhook events (EventOptions) are written ahead and confirmed after (ChangeEvents).
 */
export class CassandraUsers implements UserStore {
  constructor(
    private readonly db: Cql,
    private readonly ks: string,
    private readonly events: ChangeEvents,
  ) {}

  private read(row: import('cassandra-driver').types.Row): ChatUser {
    const data = dataOf(opt(row, 'data'));
    const user: ChatUser = { appId: str(row, 'app_id'), id: str(row, 'id'), username: str(row, 'username'), displayName: str(row, 'display_name'), createdAt: str(row, 'created_at'), updatedAt: str(row, 'updated_at') };
    if (data !== undefined) user.data = data;
    return user;
  }

  private write(u: ChatUser) {
    return this.db.execute(`INSERT INTO ${this.ks}.users (app_id, id, username, display_name, created_at, updated_at, data) VALUES (?, ?, ?, ?, ?, ?, ?)`, [u.appId, u.id, u.username, u.displayName, u.createdAt, u.updatedAt, dataText(u.data) ?? unset]);
  }

  /**
   * The user row is written before the username is claimed, so a claimed username always names a
   * stored user: a create that fails half-way leaves at most an unreachable row under a fresh id,
   * never a username that is taken but resolves to nobody. A losing create removes its row.
   */
  create(user: ChatUser, options?: EventOptions): Promise<'created' | 'exists'> {
    return this.events.around(options?.events, () => this.claim(user), (r) => r === 'created');
  }

  private async claim(user: ChatUser): Promise<'created' | 'exists'> {
    await this.write(user);
    const claim = await claimRow(this.db, `INSERT INTO ${this.ks}.usernames (app_id, username, user_id) VALUES (?, ?, ?) IF NOT EXISTS`, [user.appId, user.username, user.id], 'user_id', user.id);
    if (claim.won) return 'created';
    await this.db.execute(`DELETE FROM ${this.ks}.users WHERE app_id = ? AND id = ?`, [user.appId, user.id]);
    return 'exists';
  }

  async get(appId: string, userId: string): Promise<ChatUser | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.users WHERE app_id = ? AND id = ?`, [appId, userId])).first();
    return row ? this.read(row) : undefined;
  }

  async getByUsername(appId: string, username: string): Promise<ChatUser | undefined> {
    const row = (await this.db.execute(`SELECT user_id FROM ${this.ks}.usernames WHERE app_id = ? AND username = ?`, [appId, username])).first();
    return row ? this.get(appId, str(row, 'user_id')) : undefined;
  }

  async update(user: ChatUser): Promise<'updated' | 'not-found'> {
    const result = await this.db.execute(`UPDATE ${this.ks}.users SET username = ?, display_name = ?, created_at = ?, updated_at = ?, data = ? WHERE app_id = ? AND id = ? IF EXISTS`, [user.username, user.displayName, user.createdAt, user.updatedAt, dataText(user.data) ?? null, user.appId, user.id]);
    return applied(result) ? 'updated' : 'not-found';
  }

  delete(appId: string, userId: string, options?: EventOptions): Promise<'deleted' | 'not-found'> {
    return this.events.around(options?.events, () => this.remove(appId, userId), (r) => r === 'deleted');
  }

  private async remove(appId: string, userId: string): Promise<'deleted' | 'not-found'> {
    const user = await this.get(appId, userId);
    if (!user) return 'not-found';
    const gone = await this.db.execute(`DELETE FROM ${this.ks}.users WHERE app_id = ? AND id = ? IF EXISTS`, [appId, userId]);
    if (!applied(gone)) return 'not-found';
    await this.db.execute(`DELETE FROM ${this.ks}.usernames WHERE app_id = ? AND username = ? IF user_id = ?`, [appId, user.username, userId]);
    return 'deleted';
  }
}

/**
 * Refresh-token families. Rotation is single-use by compare-and-set on the token's `used_at`, and a
 * family is revoked by compare-and-set on its `revoked_at`, so of concurrent presenters of one
 * token exactly one rotates, one is told of the reuse, and the rest find the family revoked.
 *
 * Each compare-and-set also writes who made it (`rotated_to`, `revoked_by`: the hash of the token
 * the presenter would get, unique per request). Concurrent rounds on one partition contend, and on
 * a replicated ring one may time out with its outcome unknown; it is then tried again, and a
 * round that finds its own marker knows the earlier one applied (claimRow). A presenter is thus
 * never told of reuse because its own timed-out rotation landed.
 */
/** Cassandra's largest TTL (20 years). */
const MAX_TTL_SECONDS = 630_720_000;

/** Seconds from now until an ISO time, 1 to 20 years: the TTL of a row that is useless after it. */
function ttlUntil(iso: string): number {
  return Math.min(MAX_TTL_SECONDS, Math.max(1, Math.ceil((Date.parse(iso) - Date.now()) / 1000)));
}

export class CassandraUserSessions implements UserSessionStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  async createFamily(family: UserSessionFamily, first: UserRefreshToken): Promise<void> {
    const ttl = ttlUntil(family.expiresAt);
    await Promise.all([
      this.db.execute(`INSERT INTO ${this.ks}.user_families (app_id, id, user_id, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?) USING TTL ?`, [family.appId, family.id, family.userId, family.expiresAt, family.revokedAt ?? null, ttl]),
      this.db.execute(`INSERT INTO ${this.ks}.user_families_by_user (app_id, user_id, family_id) VALUES (?, ?, ?) USING TTL ?`, [family.appId, family.userId, family.id, ttl]),
      this.putToken(first),
    ]);
  }

  private putToken(t: UserRefreshToken) {
    return this.db.execute(`INSERT INTO ${this.ks}.user_tokens (app_id, hash, family_id, user_id, expires_at, used_at) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?`, [t.appId, t.hash, t.familyId, t.userId, t.expiresAt, t.usedAt ?? null, ttlUntil(t.expiresAt)]);
  }

  /** Rows expire by their TTLs (set from each record's expiry), so there is nothing to sweep. */
  async sweepExpired(): Promise<number> {
    return 0;
  }

  async getFamily(appId: string, id: string): Promise<UserSessionFamily | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.user_families WHERE app_id = ? AND id = ?`, [appId, id])).first();
    return row ? defined({ appId: str(row, 'app_id'), id: str(row, 'id'), userId: str(row, 'user_id'), expiresAt: str(row, 'expires_at'), revokedAt: opt(row, 'revoked_at') }) : undefined;
  }

  /**
   * Revokes a live family, as `by`; true when this call revoked it. The revocation expires with the
   * family (a cell without a TTL would outlive its row).
   */
  private async revoke(appId: string, familyId: string, now: string, expiresAt: string, by: string): Promise<boolean> {
    const query = `UPDATE ${this.ks}.user_families USING TTL ? SET revoked_at = ?, revoked_by = ? WHERE app_id = ? AND id = ? IF revoked_at = null AND revoked_by = null`;
    return (await claimRow(this.db, query, [ttlUntil(expiresAt), now, by, appId, familyId], 'revoked_by', by)).won;
  }

  async rotate(appId: string, oldHash: string, nextHash: string, now: string): Promise<UserRotateResult> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.user_tokens WHERE app_id = ? AND hash = ?`, [appId, oldHash])).first();
    if (!row) return { kind: 'invalid' };
    const familyId = str(row, 'family_id');
    const family = await this.getFamily(appId, familyId);
    if (!family || family.revokedAt) return { kind: 'invalid' };
    const reuse = async (): Promise<UserRotateResult> => ((await this.revoke(appId, familyId, now, family.expiresAt, nextHash)) ? { kind: 'reused', familyId } : { kind: 'invalid' });
    if (opt(row, 'used_at')) return reuse();
    const expiresAt = str(row, 'expires_at');
    if (expiresAt <= now || family.expiresAt <= now) return { kind: 'invalid' };
    const query = `UPDATE ${this.ks}.user_tokens USING TTL ? SET used_at = ?, rotated_to = ? WHERE app_id = ? AND hash = ? IF used_at = null AND rotated_to = null`;
    const claimed = await claimRow(this.db, query, [ttlUntil(expiresAt), now, nextHash, appId, oldHash], 'rotated_to', nextHash);
    if (!claimed.won) return reuse();
    await this.putToken({ appId, hash: nextHash, familyId, userId: family.userId, expiresAt });
    return { kind: 'rotated', userId: family.userId, familyId };
  }

  async revokeAllForUser(appId: string, userId: string, now: string): Promise<void> {
    const rows = (await this.db.execute(`SELECT family_id FROM ${this.ks}.user_families_by_user WHERE app_id = ? AND user_id = ?`, [appId, userId])).rows;
    await Promise.all(
      rows.map(async (r) => {
        const family = await this.getFamily(appId, str(r, 'family_id'));
        if (family && !family.revokedAt) await this.revoke(appId, family.id, now, family.expiresAt, randomUUID());
      }),
    );
  }
}
