import Type from 'typebox';
import { defineRoute, toJwk, type AnyRoute } from '../../common/index.ts';
import type { ControlContext } from '../context.ts';

export function metaRoutes(ctx: ControlContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/.well-known/jwks.json',
      operationId: 'jwks',
      summary: 'Public keys that verify access tokens and API keys (JWKS)',
      tags: ['operations'],
      responses: { 200: { description: 'JSON Web Key Set', schema: Type.Object({ keys: Type.Array(Type.Object({ kid: Type.String() })) }) } },
      handler: async () => ({ status: 200, body: { keys: (await ctx.store.signingKeys.list()).map(toJwk) } }),
    }),
  ];
}
