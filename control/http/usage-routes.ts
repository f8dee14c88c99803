import { ApiError } from '../../common/errors/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import type { ControlContext } from '../context.ts';
import { AppParams, Usage } from './schemas.ts';

const DAYS = 30;
const DAY_MS = 86_400_000;

/** The last `n` UTC days up to `now`, oldest first, as 'YYYY-MM-DD'. */
export function lastDays(now: Date, n = DAYS): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: n }, (_, i) => new Date(today - (n - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

export function usageRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/client/apps/:appId/usage',
      operationId: 'getApplicationUsage',
      summary: 'Usage of an application: users, chats, messages per day (last 30 days), concurrent users, attachment bytes stored',
      description:
        'Each node counts in memory and adds its counts to the store every USAGE_FLUSH_SECONDS (default 60), so figures lag by at most that. ' +
        'Concurrent users are sampled (at most once a second per application while connections change, and once per flush while any are connected): a peak shorter than a second may be missed. ' +
        "API keys' last use is in the key list (`lastUsedAt`).",
      tags: ['applications'],
      params: AppParams,
      auth,
      responses: {
        200: { description: 'Usage', schema: Usage },
        400: { description: 'appId is not a UUID' },
        401: { description: 'Token missing or invalid' },
        404: { description: 'No such application in this account (APP_NOT_FOUND)' },
      },
      handler: async ({ params, auth }) => {
        const app = await ctx.store.applications.get(auth.accountId, params.appId);
        if (!app) return new ApiError('APP_NOT_FOUND', 'no such application in this account');
        const now = ctx.now();
        const days = lastDays(now);
        const u = await ctx.store.usage.read(app.id, days);
        // A sample older than a few flushes means no node has had a user of the application
        // connected since (nodes sample every flush while any is): nobody is connected.
        const fresh = u.current && now.getTime() - Date.parse(u.current.at) <= 3 * ctx.config.USAGE_FLUSH_SECONDS * 1000;
        const perDay = days.map((day) => ({ day, messages: u.messagesByDay[day] ?? 0, peakUsers: u.peakByDay[day] ?? 0 }));
        return {
          status: 200,
          body: {
            appId: app.id,
            registeredUsers: Math.max(0, u.users),
            chats: Math.max(0, u.chats),
            messages: u.messages,
            storedFileBytes: Math.max(0, u.fileBytes),
            concurrentUsers: { current: fresh ? u.current!.users : 0, peak: Math.max(0, ...perDay.map((d) => d.peakUsers)) },
            days: perDay,
            asOf: now.toISOString(),
          },
        };
      },
    }),
  ];
}
