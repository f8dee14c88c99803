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

/** A JSON object column (an application's custom data): its text to write, undefined for none. */
export const dataText = (data: Record<string, unknown> | undefined): string | undefined => (data === undefined ? undefined : JSON.stringify(data));
/** A JSON object column read back: undefined for null. */
export const dataOf = (text: string | undefined): Record<string, unknown> | undefined => (text === undefined ? undefined : (JSON.parse(text) as Record<string, unknown>));
