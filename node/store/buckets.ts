import { BUCKET_MS } from './types.ts';

/** Milliseconds since the epoch encoded in the first 48 bits of a UUIDv7. */
export const uuidv7Time = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/** The least UUIDv7 of a time in ms: every id made at or after it sorts at or after this one. */
export function leastIdAt(ms: number): string {
  const hex = Math.max(0, ms).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`;
}

/** The time bucket (UTC day) of a message, from its id: the same in every store implementation. */
export const bucketOf = (id: string): number => Math.floor(uuidv7Time(id) / BUCKET_MS);
