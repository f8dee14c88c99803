/** Moderation on the node: bans (checked on every user request, announced to every node), user blocks, and the moderation log. */
export { BAN_STATUS_TTL_MS, BanGuard } from './ban-guard.ts';
export { BlockGuard } from './block-guard.ts';
export { Blocklist, BLOCKLIST_LIMITS, fold, type BlocklistEntry } from './blocklist.ts';
export { BLOCKLIST_TTL_MS, Blocklists } from './blocklists.ts';
export { BLOCKS_PER_USER, blockRoutes } from './block-routes.ts';
export { moderationRoutes } from './routes.ts';
