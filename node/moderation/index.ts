/** Moderation on the node: bans (checked on every user request, announced to every node), mutes and bans in chats, flags and their review, the blocklist, user blocks, and the moderation log. */
export { BAN_STATUS_TTL_MS, BanGuard } from './ban-guard.ts';
export { BlockGuard } from './block-guard.ts';
export { Blocklist, fold } from './blocklist.ts';
export { NodeBlocklistAdmin } from './blocklist-admin.ts';
export { BLOCKLIST_TTL_MS, Blocklists } from './blocklists.ts';
export { BLOCKS_PER_USER, blockRoutes } from './block-routes.ts';
export { banUser, moderationRoutes } from './routes.ts';
export { chatModerationRoutes } from './chat-routes.ts';
export { flagRoutes, MAX_HIDE_THRESHOLD } from './flag-routes.ts';
