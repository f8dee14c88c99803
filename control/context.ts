import type { Config } from '../common/config/index.ts';
import type { BlocklistAdmin } from '../common/moderation/index.ts';
import type { Logger } from '../common/log/index.ts';
import type { WindowLimiter } from '../common/limits/index.ts';
import type { GuessThrottle } from './auth/guess-throttle.ts';
import type { ControlTokens } from './auth/tokens.ts';
import type { Cluster, ControlStore } from './store/index.ts';

export const LIMITS = Object.freeze({
  applicationsPerAccount: 5,
  activeKeysPerApplication: 5,
  webhooksPerApplication: 5,
  /** A login's refresh tokens stop working this long after the login, however often refreshed. */
  sessionSeconds: 30 * 24 * 3600,
});

/** What every route of the control service is built from; made once at start. */
export interface ControlContext {
  config: Readonly<Config>;
  store: ControlStore;
  tokens: ControlTokens;
  log: Logger;
  /** The cluster new (demo) applications are bound to. */
  demoCluster: Cluster;
  /** Password guesses per account and address (login, currentPassword) and auth attempts per address. */
  throttles: { passwordGuesses: GuessThrottle; authPerAddress: WindowLimiter };
  /** Told about every key revocation, so an in-process node drops its cached status at once. */
  onKeyRevoked: (appId: string, keyId: string) => void;
  /** An application was deleted: the nodes end its users' sessions (see node/auth/session-guard.ts). */
  onAppDeleted: (appId: string) => void;
  /** An application's webhook endpoints or before-send hook changed: nodes drop their cached copies. */
  onWebhooksChanged: (appId: string) => void;
  /** An application's attachment settings changed: nodes drop their cached copies. */
  onAttachmentSettingsChanged: (appId: string) => void;
  /** An application's push settings changed: nodes drop their cached copies. */
  onPushSettingsChanged: (appId: string) => void;
  /** Applications' blocklists (kept with the nodes' moderation data); absent when this process cannot reach them. */
  blocklists?: BlocklistAdmin;
  now: () => Date;
}
