import { ApiError } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { BLOCKLIST_LIMITS, BLOCKLIST_MAX_BODY_BYTES, BlocklistBody, BlocklistView } from '../../common/moderation/index.ts';
import type { ControlContext } from '../context.ts';
import { AppParams } from './schemas.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');

/**
 * An application's blocklist from the dashboard (README, "Moderation"): the same list the backend
 * reads and sets on a node with its API key, changed the same way (checked, recorded in the
 * moderation log as `account:<accountId>`, applied on every node at once).
 */
export function blocklistRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const tags = ['moderation'];
  const path = '/api/client/apps/:appId/blocklist';
  const errors = {
    401: { description: 'Token missing or invalid' },
    404: { description: 'No such application in this account (APP_NOT_FOUND)' },
    503: { description: 'This control service runs without access to the nodes’ moderation data (UNAVAILABLE)' },
  };
  const admin = () => ctx.blocklists ?? new ApiError('UNAVAILABLE', 'blocklists are not reachable from this control service');
  return [
    defineRoute({
      method: 'GET',
      path,
      operationId: 'getApplicationBlocklist',
      summary: 'The application’s blocklist (no entries until one is set)',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The blocklist', schema: BlocklistView }, 400: { description: 'appId is not a UUID' }, ...errors },
      handler: async ({ params, auth }) => {
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const lists = admin();
        return lists instanceof ApiError ? lists : { status: 200, body: await lists.get(params.appId) };
      },
    }),
    defineRoute({
      method: 'PUT',
      path,
      operationId: 'setApplicationBlocklist',
      summary: `Replace the application’s blocklist (at most ${BLOCKLIST_LIMITS.entries} entries of 1–${BLOCKLIST_LIMITS.entryChars} characters; the body may be up to 2 MiB): sends and edits with a \`block\` entry are refused, \`mask\` entries are starred out, on every node at once`,
      tags,
      params: AppParams,
      body: BlocklistBody,
      maxBodyBytes: BLOCKLIST_MAX_BODY_BYTES,
      auth,
      responses: { 200: { description: 'Set', schema: BlocklistView }, 400: { description: 'Invalid entries (each names its index) or appId' }, ...errors },
      handler: async ({ params, body, auth }) => {
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const lists = admin();
        if (lists instanceof ApiError) return lists;
        const set = await lists.set(params.appId, body.entries, `account:${auth.accountId}`);
        return set instanceof ApiError ? set : { status: 200, body: set };
      },
    }),
  ];
}
