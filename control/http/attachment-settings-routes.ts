import { ApiError } from '../../common/index.ts';
import { defineRoute, type AnyRoute } from '../../common/http/index.ts';
import { AttachmentSettingsBody, AttachmentSettingsView, deploymentLimits, settingsProblems } from '../../common/attachments/index.ts';
import type { ControlContext } from '../context.ts';
import { AppParams } from './schemas.ts';

const appNotFound = () => new ApiError('APP_NOT_FOUND', 'no such application in this account');

/**
 * An application's attachment settings (README, "Attachments"): its largest file, its total bytes
 * and the types it accepts, each within what the deployment allows. A set replaces them whole and
 * is announced (`onAttachmentSettingsChanged`), so every node applies it to the next upload.
 */
export function attachmentSettingsRoutes(ctx: ControlContext): AnyRoute[] {
  const auth = { verify: ctx.tokens.authenticate, security: 'accessToken' };
  const tags = ['attachments'];
  const path = '/api/client/apps/:appId/attachment-settings';
  // As this service is configured: the nodes apply their own figures too (the smaller wins).
  const deployment = deploymentLimits(ctx.config);
  const errors = {
    401: { description: 'Token missing or invalid' },
    404: { description: 'No such application in this account (APP_NOT_FOUND)' },
  };
  return [
    defineRoute({
      method: 'GET',
      path,
      operationId: 'getAttachmentSettings',
      summary: 'The application’s attachment settings, and the limits of the deployment they narrow',
      tags,
      params: AppParams,
      auth,
      responses: { 200: { description: 'The settings (`{}` until set)', schema: AttachmentSettingsView }, 400: { description: 'appId is not a UUID' }, ...errors },
      handler: async ({ params, auth }) => {
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const stored = await ctx.store.attachmentSettings.get(params.appId);
        return { status: 200, body: { settings: stored?.settings ?? {}, ...(stored ? { updatedAt: stored.updatedAt } : {}), deployment } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path,
      operationId: 'setAttachmentSettings',
      summary: 'Replace the application’s attachment settings: largest file, total bytes, accepted and refused types',
      description:
        'Replaces the whole setting: an omitted field takes the deployment’s value (`{}` restores them all). Each figure must be within the deployment’s; ' +
        'types are matched against what is sniffed from a file’s bytes, at finalize (and against the declared type when an upload is asked for). ' +
        'Every node applies a change to the uploads asked for or finalized after it.',
      tags,
      params: AppParams,
      body: AttachmentSettingsBody,
      auth,
      responses: {
        200: { description: 'Set', schema: AttachmentSettingsView },
        400: { description: 'Invalid fields, or a figure past the deployment’s (VALIDATION_FAILED, naming the field and the limit)' },
        ...errors,
      },
      handler: async ({ params, body, auth }) => {
        const problems = settingsProblems(body, deployment);
        if (problems.length > 0) return new ApiError('VALIDATION_FAILED', `${problems[0]!.path.slice('/body/'.length)} ${problems[0]!.message}`, { errors: problems });
        if (!(await ctx.store.applications.get(auth.accountId, params.appId))) return appNotFound();
        const updatedAt = ctx.now().toISOString();
        await ctx.store.attachmentSettings.set({ appId: params.appId, settings: body, updatedAt });
        ctx.onAttachmentSettingsChanged(params.appId);
        return { status: 200, body: { settings: body, updatedAt, deployment } };
      },
    }),
  ];
}
