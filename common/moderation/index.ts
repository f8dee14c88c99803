import Type, { type Static } from 'typebox';
import type { ApiError } from '../errors/index.ts';
import { DisplayText } from '../http/text-formats.ts';
import { BLOCKLIST_LIMITS } from './limits.ts';

export { BLOCKLIST_LIMITS } from './limits.ts';

/**
 * An application's blocklist as both services speak of it (README, "Moderation"): the backend sets
 * it on a node with its API key, the dashboard through the control service. Where it is kept and
 * how it is matched is the node's (node/moderation).
 */

/** A blocklist body can be large (10,000 entries of 100 characters, JSON-escaped): its routes take up to this. */
export const BLOCKLIST_MAX_BODY_BYTES = 2 * 1024 * 1024;

export const BlocklistEntrySchema = Type.Object(
  {
    text: DisplayText(1, BLOCKLIST_LIMITS.entryChars, { description: 'A word or phrase (1–100 characters), matched as whole words on folded text: case, compatibility forms and diacritics set aside' }),
    action: Type.Union([Type.Literal('block'), Type.Literal('mask')], { description: '`block`: the send or edit is refused (CONTENT_BLOCKED); `mask`: the matched text is replaced by `*`, one per character' }),
  },
  { additionalProperties: false },
);
export const BlocklistBody = Type.Object({ entries: Type.Array(BlocklistEntrySchema, { maxItems: BLOCKLIST_LIMITS.entries }) }, { additionalProperties: false });
export const BlocklistView = Type.Object({ entries: Type.Array(BlocklistEntrySchema), updatedAt: Type.Optional(Type.String({ format: 'date-time' })) });

export type BlocklistEntry = Static<typeof BlocklistEntrySchema>;
export type BlocklistState = Static<typeof BlocklistView>;

/**
 * Reading and replacing an application's blocklist, wherever the call comes from: `set` checks
 * the entries (VALIDATION_FAILED naming each one that matches nothing), records the change in the
 * moderation log as `by`, stores it and announces it to every node.
 */
export interface BlocklistAdmin {
  get(appId: string): Promise<BlocklistState>;
  set(appId: string, entries: BlocklistEntry[], by: string): Promise<Required<BlocklistState> | ApiError>;
}
