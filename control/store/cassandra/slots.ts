import { claimRow, type Cql } from '../../../common/cassandra/index.ts';

/**
 * A limit as numbered slots in one partition (`table`: parent column, `slot`, holder column): a
 * holder claims a free slot by compare-and-set, so however many create at once, at most `limit`
 * hold one. Claims start at a random slot to spread contention.
 */
export class Slots {
  constructor(
    private readonly db: Cql,
    private readonly table: string,
    private readonly parent: string,
    private readonly holder: string,
  ) {}

  async claim(parentId: string, holderId: string, limit: number): Promise<number | undefined> {
    const start = Math.floor(Math.random() * limit);
    for (let i = 0; i < limit; i++) {
      const slot = (start + i) % limit;
      const { won } = await claimRow(this.db, `INSERT INTO ${this.table} (${this.parent}, slot, ${this.holder}) VALUES (?, ?, ?) IF NOT EXISTS`, [parentId, slot, holderId], this.holder, holderId);
      if (won) return slot;
    }
    return undefined;
  }

  async release(parentId: string, slot: number, holderId: string): Promise<void> {
    await this.db.execute(`DELETE FROM ${this.table} WHERE ${this.parent} = ? AND slot = ? IF ${this.holder} = ?`, [parentId, slot, holderId]);
  }

  /** Hands a held slot to another holder (rotation keeps the count). */
  async transfer(parentId: string, slot: number, from: string, to: string): Promise<void> {
    await this.db.execute(`UPDATE ${this.table} SET ${this.holder} = ? WHERE ${this.parent} = ? AND slot = ? IF ${this.holder} = ?`, [to, parentId, slot, from]);
  }
}
