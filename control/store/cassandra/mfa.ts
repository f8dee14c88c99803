import { applied, type Cql } from '../../../common/cassandra/index.ts';
import type { MfaState, MfaStore } from '../types.ts';

/**
 * The MFA store on Cassandra: `account_mfa` (one row per account), `account_mfa_recovery` (one
 * partition per account, a row per code hash; `used_at` is '' while unused) and
 * `mfa_challenges_used` (rows expire by TTL). Every "once" is a lightweight transaction.
 */
export class CassandraMfa implements MfaStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  async get(accountId: string): Promise<MfaState | undefined> {
    const row = (await this.db.execute(`SELECT pending_secret, secret, enabled_at, last_step FROM ${this.ks}.account_mfa WHERE account_id = ?`, [accountId])).first();
    if (!row) return undefined;
    const state: MfaState = { lastStep: Number(row.get('last_step') ?? 0) };
    if (row.get('pending_secret')) state.pendingSecret = String(row.get('pending_secret'));
    if (row.get('secret')) {
      state.secret = String(row.get('secret'));
      state.enabledAt = String(row.get('enabled_at'));
    }
    return state;
  }

  async begin(accountId: string, secret: string): Promise<'pending' | 'enabled'> {
    // Created without a secret if absent; then the pending secret is set only while none is confirmed.
    await this.db.execute(`INSERT INTO ${this.ks}.account_mfa (account_id, last_step) VALUES (?, 0) IF NOT EXISTS`, [accountId]);
    const result = await this.db.execute(`UPDATE ${this.ks}.account_mfa SET pending_secret = ? WHERE account_id = ? IF secret = null`, [secret, accountId]);
    return applied(result) ? 'pending' : 'enabled';
  }

  async confirm(accountId: string, secret: string, recoveryHashes: string[], step: number, now: string): Promise<'enabled' | 'stale'> {
    const current = await this.get(accountId);
    if (!current || current.secret || current.pendingSecret !== secret) return 'stale';
    // The codes are written before the switch: until it is applied they have no effect (codes are
    // checked only while MFA is on), and a confirm that loses the race leaves codes the next replaces.
    await this.db.execute(`DELETE FROM ${this.ks}.account_mfa_recovery WHERE account_id = ?`, [accountId]);
    for (const hash of recoveryHashes) await this.db.execute(`INSERT INTO ${this.ks}.account_mfa_recovery (account_id, hash, used_at) VALUES (?, ?, '')`, [accountId, hash]);
    const result = await this.db.execute(
      `UPDATE ${this.ks}.account_mfa SET secret = ?, enabled_at = ?, last_step = ?, pending_secret = null WHERE account_id = ? IF pending_secret = ? AND secret = null`,
      [secret, now, step, accountId, secret],
    );
    return applied(result) ? 'enabled' : 'stale';
  }

  async useStep(accountId: string, step: number): Promise<boolean> {
    const result = await this.db.execute(`UPDATE ${this.ks}.account_mfa SET last_step = ? WHERE account_id = ? IF last_step < ? AND secret != null`, [step, accountId, step]);
    return applied(result);
  }

  async useRecoveryCode(accountId: string, hash: string, now: string): Promise<boolean> {
    // `IF used_at = ''`: an absent row has used_at null, so an unknown code is never applied.
    const result = await this.db.execute(`UPDATE ${this.ks}.account_mfa_recovery SET used_at = ? WHERE account_id = ? AND hash = ? IF used_at = ''`, [now, accountId, hash]);
    return applied(result);
  }

  async unusedRecoveryCodes(accountId: string): Promise<number> {
    const rows = await this.db.execute(`SELECT used_at FROM ${this.ks}.account_mfa_recovery WHERE account_id = ?`, [accountId]);
    return rows.rows.filter((r) => r.get('used_at') === '').length;
  }

  async disable(accountId: string): Promise<void> {
    await this.db.execute(`DELETE FROM ${this.ks}.account_mfa WHERE account_id = ?`, [accountId]);
    await this.db.execute(`DELETE FROM ${this.ks}.account_mfa_recovery WHERE account_id = ?`, [accountId]);
  }

  async challengeUsed(id: string): Promise<boolean> {
    return (await this.db.execute(`SELECT id FROM ${this.ks}.mfa_challenges_used WHERE id = ?`, [id])).first() != null;
  }

  async useChallenge(id: string, expiresAtMs: number): Promise<boolean> {
    const ttl = Math.max(1, Math.ceil((expiresAtMs - Date.now()) / 1000) + 60);
    const result = await this.db.execute(`INSERT INTO ${this.ks}.mfa_challenges_used (id) VALUES (?) IF NOT EXISTS USING TTL ${ttl}`, [id]);
    return applied(result);
  }
}
