import type { types } from 'cassandra-driver';
import { STATEMENT_OPTIONS, type Cql } from '../../../common/cassandra/index.ts';

/**
 * Every row `query` selects, read a page of `fetchSize` rows at a time. For operator reads of
 * small tables only (the cluster registry, applications): a query without a partition key reads
 * the whole table, on every node that holds part of it.
 */
export async function* scanRows(db: Cql, query: string, params: unknown[] = [], fetchSize = 500): AsyncGenerator<types.Row> {
  let pageState: string | undefined;
  do {
    const page = await db.execute(query, params, { ...STATEMENT_OPTIONS, fetchSize, ...(pageState === undefined ? {} : { pageState }) });
    yield* page.rows;
    pageState = page.pageState ?? undefined;
  } while (pageState !== undefined);
}
