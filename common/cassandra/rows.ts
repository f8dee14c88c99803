import type { types } from 'cassandra-driver';

/** Column readers: Cassandra gives `null` for absent values and `Long` for bigint. */
export const str = (row: types.Row, column: string): string => String(row.get(column));
export const opt = (row: types.Row, column: string): string | undefined => {
  const value = row.get(column) as string | null | undefined;
  return value === null || value === undefined ? undefined : value;
};
export const num = (row: types.Row, column: string): number => {
  const value = row.get(column) as { toString(): string } | number | null | undefined;
  return value === null || value === undefined ? 0 : Number(value.toString());
};

/** Copies only the defined fields, so a record read back equals the one written. */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
