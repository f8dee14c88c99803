import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../../common/index.ts';
import type { BlocklistAdmin, BlocklistEntry, BlocklistState } from '../../common/moderation/index.ts';
import type { NodeStore } from '../store/index.ts';
import { fold } from './blocklist.ts';

/**
 * The blocklist's one writer (see BlocklistAdmin): the node's API-key route and the dashboard's
 * management route both go through here, so a change is checked, recorded and announced the same
 * way whoever makes it. `changed` announces it (every node reads the list again) and sends its
 * webhook event where a node runs.
 */
export class NodeBlocklistAdmin implements BlocklistAdmin {
  constructor(
    private readonly store: NodeStore,
    private readonly changed: (appId: string, event: { entries: number; updatedAt: string; by: string }) => Promise<void>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async get(appId: string): Promise<BlocklistState> {
    const list = await this.store.moderation.blocklist(appId);
    return { entries: list?.entries ?? [], ...(list ? { updatedAt: list.updatedAt } : {}) };
  }

  async set(appId: string, entries: BlocklistEntry[], by: string): Promise<Required<BlocklistState> | ApiError> {
    const empty = entries.flatMap((e, i) => (fold(e.text).folded.length === 0 ? [{ path: `/body/entries/${i}/text`, message: 'has no letter, digit or symbol left once diacritics are set aside' }] : []));
    if (empty.length > 0) return new ApiError('VALIDATION_FAILED', 'an entry matches nothing', { errors: empty.slice(0, 20) });
    const now = this.now().toISOString();
    // Recorded first, as every moderation action: no change exists unrecorded.
    await this.store.moderation.log({ appId, id: uuidv7(), at: now, action: 'blocklist.updated', by, reason: `${entries.length} entries` });
    await this.store.moderation.setBlocklist(appId, { entries, version: uuidv7(), updatedAt: now });
    await this.changed(appId, { entries: entries.length, updatedAt: now, by });
    return { entries, updatedAt: now };
  }
}
