import Type from 'typebox';
import { ApiError } from '../../common/index.ts';

/**
 * An application's own data on a message, a user or a chat (README, "Custom data"): a JSON object
 * the service stores and returns everywhere the object goes, and never interprets.
 */
export const CUSTOM_DATA = Object.freeze({
  /** Bytes of the object encoded as JSON (UTF-8). */
  maxBytes: 4096,
  /** Levels of objects and arrays, the top object counting as one. */
  maxDepth: 8,
});

export type CustomData = Record<string, unknown>;

export const CustomDataSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: `Your application's own data, returned as given and never interpreted: a JSON object of at most ${CUSTOM_DATA.maxBytes} bytes encoded and ${CUSTOM_DATA.maxDepth} levels deep`,
});

/**
 * Why `data` cannot be stored, if it cannot: too deep or too large. Linear in the value's size:
 * the walk visits each value once and stops at the first level too deep, and the size is one
 * encoding. The value came from a parsed JSON body, whose size the server already bounds.
 */
export function customDataProblem(data: CustomData | undefined, path: string): ApiError | undefined {
  if (data === undefined) return undefined;
  const refuse = (message: string) => ApiError.field('VALIDATION_FAILED', path, message);
  const stack: [unknown, number][] = [[data, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > CUSTOM_DATA.maxDepth) return refuse(`must be at most ${CUSTOM_DATA.maxDepth} levels deep`);
    for (const child of Array.isArray(value) ? value : Object.values(value)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  const bytes = Buffer.byteLength(JSON.stringify(data));
  if (bytes > CUSTOM_DATA.maxBytes) return refuse(`must be at most ${CUSTOM_DATA.maxBytes} bytes encoded as JSON (it is ${bytes})`);
  return undefined;
}

/** The data to store: an empty object is none (so `{}` in an edit clears it). */
export const storedData = (data: CustomData | undefined): CustomData | undefined => (data === undefined || Object.keys(data).length === 0 ? undefined : data);
