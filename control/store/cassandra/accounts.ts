import type { types } from 'cassandra-driver';
import { applied, claimRow, defined, opt, str, type Cql } from '../../../common/cassandra/index.ts';
import type { Account, AccountStore, RefreshTokenRecord, RotateResult, SessionFamily, SessionStore } from '../types.ts';


/** Accounts; an e-mail is claimed by compare-and-set, so of concurrent claimants exactly one holds it. */
export class CassandraAccounts implements AccountStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  private read(row: types.Row): Account {
    return {
      id: str(row, 'id'),
      email: str(row, 'email'),
      companyName: str(row, 'company_name'),
      role: 'CLIENT',
      passwordHash: str(row, 'password_hash'),
      passwordSalt: str(row, 'password_salt'),
      createdAt: str(row, 'created_at'),
      updatedAt: str(row, 'updated_at'),
    };
  }

  private claim(email: string, accountId: string) {
    return claimRow(this.db, `INSERT INTO ${this.ks}.account_emails (email, account_id) VALUES (?, ?) IF NOT EXISTS`, [email, accountId], 'account_id', accountId).then((r) => r.won);
  }

  private release(email: string, accountId: string) {
    return this.db.execute(`DELETE FROM ${this.ks}.account_emails WHERE email = ? IF account_id = ?`, [email, accountId]);
  }

  private write(a: Account) {
    return this.db.execute(
      `INSERT INTO ${this.ks}.accounts (id, email, company_name, role, password_hash, password_salt, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      [a.id, a.email, a.companyName, a.role, a.passwordHash, a.passwordSalt, a.createdAt, a.updatedAt],
    );
  }

  async create(account: Account): Promise<'created' | 'exists'> {
    if (!(await this.claim(account.email, account.id))) return 'exists';
    await this.write(account);
    return 'created';
  }

  async get(id: string): Promise<Account | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.accounts WHERE id = ?`, [id])).first();
    return row ? this.read(row) : undefined;
  }

  async getByEmail(email: string): Promise<Account | undefined> {
    const row = (await this.db.execute(`SELECT account_id FROM ${this.ks}.account_emails WHERE email = ?`, [email])).first();
    if (!row) return undefined;
    const account = await this.get(str(row, 'account_id'));
    return account?.email === email ? account : undefined;
  }

  async update(account: Account): Promise<'updated' | 'not-found' | 'email-taken'> {
    const current = await this.get(account.id);
    if (!current) return 'not-found';
    const moving = current.email !== account.email;
    if (moving && !(await this.claim(account.email, account.id))) return 'email-taken';
    await this.write(account);
    if (moving) await this.release(current.email, account.id);
    return 'updated';
  }
}

/**
 * Refresh-token families. A token is used once, by compare-and-set on `used_at`; a family is
 * revoked once, by compare-and-set on `revoked_at`, keeping its first revocation time.
 */
export class CassandraSessions implements SessionStore {
  constructor(private readonly db: Cql, private readonly ks: string) {}

  private putToken(t: RefreshTokenRecord) {
    return this.db.execute(`INSERT INTO ${this.ks}.refresh_tokens (hash, family_id, account_id, expires_at, used_at) VALUES (?, ?, ?, ?, ?)`, [t.hash, t.familyId, t.accountId, t.expiresAt, t.usedAt ?? null]);
  }

  async createFamily(family: SessionFamily, first: RefreshTokenRecord): Promise<void> {
    await Promise.all([
      this.db.execute(`INSERT INTO ${this.ks}.session_families (id, account_id, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?)`, [family.id, family.accountId, family.createdAt, family.expiresAt, family.revokedAt ?? null]),
      this.db.execute(`INSERT INTO ${this.ks}.session_families_by_account (account_id, family_id) VALUES (?, ?)`, [family.accountId, family.id]),
      this.putToken(first),
    ]);
  }

  async getFamily(id: string): Promise<SessionFamily | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.session_families WHERE id = ?`, [id])).first();
    return row ? defined({ id: str(row, 'id'), accountId: str(row, 'account_id'), createdAt: str(row, 'created_at'), expiresAt: str(row, 'expires_at'), revokedAt: opt(row, 'revoked_at') }) : undefined;
  }

  async findToken(hash: string): Promise<RefreshTokenRecord | undefined> {
    const row = (await this.db.execute(`SELECT * FROM ${this.ks}.refresh_tokens WHERE hash = ?`, [hash])).first();
    return row ? defined({ hash: str(row, 'hash'), familyId: str(row, 'family_id'), accountId: str(row, 'account_id'), expiresAt: str(row, 'expires_at'), usedAt: opt(row, 'used_at') }) : undefined;
  }

  private async revokeOnce(id: string, now: string): Promise<boolean> {
    // Only for families known to exist: on a missing row the condition would hold and create it.
    return applied(await this.db.execute(`UPDATE ${this.ks}.session_families SET revoked_at = ? WHERE id = ? IF revoked_at = null`, [now, id]));
  }

  async rotate(oldHash: string, next: Omit<RefreshTokenRecord, 'familyId' | 'accountId'>, now: string): Promise<RotateResult> {
    const token = await this.findToken(oldHash);
    if (!token) return { kind: 'invalid' };
    const family = await this.getFamily(token.familyId);
    if (!family || family.revokedAt) return { kind: 'invalid' };
    const reuse = async (): Promise<RotateResult> => ((await this.revokeOnce(family.id, now)) ? { kind: 'reused', familyId: family.id } : { kind: 'invalid' });
    if (token.usedAt) return reuse();
    if (token.expiresAt <= now || family.expiresAt <= now) return { kind: 'invalid' };
    const claimed = await this.db.execute(`UPDATE ${this.ks}.refresh_tokens SET used_at = ? WHERE hash = ? IF used_at = null`, [now, oldHash]);
    if (!applied(claimed)) return reuse();
    await this.putToken({ ...next, familyId: family.id, accountId: family.accountId });
    return { kind: 'rotated', accountId: family.accountId, familyId: family.id };
  }

  async revokeFamily(id: string, now: string): Promise<void> {
    if (await this.getFamily(id)) await this.revokeOnce(id, now);
  }

  async revokeAllForAccount(accountId: string, now: string, keep?: string): Promise<void> {
    const rows = (await this.db.execute(`SELECT family_id FROM ${this.ks}.session_families_by_account WHERE account_id = ?`, [accountId])).rows;
    await Promise.all(rows.map((r) => str(r, 'family_id')).filter((id) => id !== keep).map((id) => this.revokeOnce(id, now)));
  }
}
