import { randomUUID } from 'node:crypto';

/**
 * The first 24 characters of a random UUID, drawn once per process: every connection id of this
 * process begins with them. 74 random bits, so two processes (a node restarted with the same node
 * id included) never name connections alike.
 */
const PREFIX = randomUUID().slice(0, 24);
let issued = 0;

/**
 * A number naming a new connection of this process, unique within it. A socket keeps the number
 * (a small integer, stored inline) rather than its id (a 56-byte string per socket); the id is
 * made from it where it is used, always the same one.
 */
export function nextConnection(): number {
  return ++issued;
}

/**
 * The connection's id as clients and other nodes see it: a UUID (the prefix, then the number as
 * 12 hex digits). An id that is already a string is its own.
 */
export function connectionId(id: string | number): string {
  return typeof id === 'string' ? id : PREFIX + id.toString(16).padStart(12, '0');
}
