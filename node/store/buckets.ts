import { BUCKET_MS } from './types.ts';

/** Milliseconds since the epoch encoded in the first 48 bits of a UUIDv7. */
export const uuidv7Time = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

/** The time bucket (UTC day) of a message, from its id: the same in every store implementation. */
export const bucketOf = (id: string): number => Math.floor(uuidv7Time(id) / BUCKET_MS);
