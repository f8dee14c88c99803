import { KeyRotationConflict, rotatedKeys, type SigningKey, type SigningKeyStore } from '../jwt/index.ts';
import { applied, claimRow, type Cql } from './client.ts';

/**
 * A service's signing keys on Cassandra or ScyllaDB, in two tables of one layout:
 * - `<prefix>_signing_keys (scope PRIMARY KEY, kid, key)`: the first key, claimed by compare-and-set
 *   (`IF NOT EXISTS`) so concurrent first starts agree on one; its `kid` column then names the key
 *   the latest rotation stored, and moving it by compare-and-set serializes rotations;
 * - `<prefix>_signing_keyring (scope, kid, key, PRIMARY KEY ((scope), kid))`: the keys rotations
 *   wrote, one partition per scope, each rotation in one single-partition batch (atomic). A key in
 *   both tables is read from the keyring (it carries its retirement).
 * A rotation interrupted between its compare-and-set and its batch wrote no key: nothing changes
 * for the services, and the next rotation proceeds.
 */
export class CassandraSigningKeys implements SigningKeyStore {
  private readonly first: string;
  private readonly ring: string;

  constructor(
    private readonly db: Cql,
    keyspace: string,
    prefix: 'control' | 'node',
    private readonly scope: string,
  ) {
    this.first = `${keyspace}.${prefix}_signing_keys`;
    this.ring = `${keyspace}.${prefix}_signing_keyring`;
  }

  async ensure(candidate: SigningKey): Promise<SigningKey> {
    const claim = await claimRow(this.db, `INSERT INTO ${this.first} (scope, kid, key) VALUES (?, ?, ?) IF NOT EXISTS`, [this.scope, candidate.kid, JSON.stringify(candidate)], 'kid', candidate.kid);
    return claim.won ? candidate : (JSON.parse(String(claim.row!.get('key'))) as SigningKey);
  }

  async list(): Promise<SigningKey[]> {
    const [first, ring] = await Promise.all([
      this.db.execute(`SELECT key FROM ${this.first} WHERE scope = ?`, [this.scope]),
      this.db.execute(`SELECT key FROM ${this.ring} WHERE scope = ?`, [this.scope]),
    ]);
    const byKid = new Map<string, SigningKey>();
    for (const row of [...first.rows, ...ring.rows]) {
      const key = JSON.parse(String(row.get('key'))) as SigningKey;
      byKid.set(key.kid, key);
    }
    return [...byKid.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.kid.localeCompare(b.kid));
  }

  async rotate(next: SigningKey, retireAt: string): Promise<void> {
    const head = (await this.db.execute(`SELECT kid FROM ${this.first} WHERE scope = ?`, [this.scope])).first();
    if (!head) throw new Error('there is no signing key to rotate yet: start the service once first');
    const latest = String(head.get('kid'));
    const keys = await this.list();
    if (keys.some((k) => k.kid === next.kid)) throw new KeyRotationConflict();
    const moved = await this.db.execute(`UPDATE ${this.first} SET kid = ? WHERE scope = ? IF kid = ?`, [next.kid, this.scope, latest]);
    if (!applied(moved)) throw new KeyRotationConflict();
    await this.db.batch(
      rotatedKeys(keys, next, retireAt).map((k) => ({ query: `INSERT INTO ${this.ring} (scope, kid, key) VALUES (?, ?, ?)`, params: [this.scope, k.kid, JSON.stringify(k)] })),
    );
  }
}
