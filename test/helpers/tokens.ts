import { join } from 'node:path';
import { TokenIssuer, type IssueOptions } from '../../common/jwt/index.ts';
import { LmdbControlStore } from '../../control/index.ts';

/** The decoded header and payload of a JWT (no verification). */
export function decodeJwt(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.');
  if (header === undefined || payload === undefined) throw new Error(`not a JWT: ${token}`);
  const part = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: part(header), payload: part(payload) };
}

export const base64urlJson = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/**
 * Signs tokens with the running service's own signing key, read through the public store interface
 * (LMDB allows a second process to open the environment). Close it in a teardown.
 */
export async function openServiceSigner(dataDir: string) {
  const store = LmdbControlStore.open(join(dataDir, 'control'));
  const key = (await store.signingKeys.list())[0];
  if (!key) {
    await store.close();
    throw new Error('the service has no signing key');
  }
  const issuer = new TokenIssuer(key, 'chat-control');
  return {
    store,
    kid: key.kid,
    issue: (options: IssueOptions) => issuer.issue(options),
    /** An access token of `accountId`'s session `sid` that expired `secondsAgo` seconds ago. */
    expiredAccess: (accountId: string, sid: string, secondsAgo = 60) =>
      issuer.issue({ kind: 'access', subject: accountId, audience: 'management', expiresInSeconds: -secondsAgo, claims: { sid } }),
    close: () => store.close(),
  };
}
