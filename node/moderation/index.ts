/** Moderation on the node: bans (checked on every user request, announced to every node) and the moderation log. */
export { BAN_STATUS_TTL_MS, BanGuard } from './ban-guard.ts';
export { moderationRoutes } from './routes.ts';
