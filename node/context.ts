import type { PushSettingsCache } from './push/index.ts';
import type { BlocklistAdmin } from '../common/moderation/index.ts';
import type { ApiError, ApiKeyPrincipal, ApiKeyVerifier, Authenticator, Config, Logger } from '../common/index.ts';
import type { SessionGuard } from './auth/session-guard.ts';
import type { BanGuard } from './moderation/index.ts';
import type { UserPrincipal, UserTokens } from './auth/user-tokens.ts';
import type { ChatService } from './chat/index.ts';
import type { NodeStore } from './store/index.ts';
import type { UsageMeter } from './usage/meter.ts';
import type { ChatWebhooks } from './chat/index.ts';
import type { Attachments } from './files/index.ts';

/** What the node's routes are built from; made once at start. */
export interface NodeContext {
  config: Readonly<Config>;
  store: NodeStore;
  tokens: UserTokens;
  apiKeys: ApiKeyVerifier;
  /** Authenticator of API-key routes: the key plus its request rate (RATE_LIMITED). */
  authenticateApiKey: Authenticator<ApiKeyPrincipal>;
  /** Counts an unauthenticated refresh from a client address; RATE_LIMITED past its budget. */
  admitRefresh: (address: string) => ApiError | undefined;
  chats: ChatService;
  /** Whether a user's application and the user still exist (sessions end with either). */
  sessions: SessionGuard;
  log: Logger;
  /** Authenticator of user routes: JWT plus the per-user request rate. */
  authenticateUser: (request: import('../common/index.ts').RequestInfo) => UserPrincipal | ApiError | Promise<UserPrincipal | ApiError>;
  /** Closes a deleted user's sockets. */
  disconnectUser: (appId: string, userId: string) => void;
  /** Bans in force, as every user request checks them. */
  bans: BanGuard;
  /** A user was banned (its sockets close on every node) or unbanned: every node drops what it knew. */
  moderated: (appId: string, userId: string, banned: boolean) => void;
  /** A user blocked or unblocked another: every node drops what it knew of the pair. */
  blocksChanged: (appId: string, userId: string, otherId: string) => void;
  /** Reads and replaces applications' blocklists (checked, recorded, announced to every node). */
  blocklists: BlocklistAdmin;
  /** Usage counts of this node (users, chats, messages, key uses, concurrent users). */
  usage: UsageMeter;
  /** Attachments' uploads and downloads; absent when ATTACHMENTS_STORE is off. */
  attachments?: Attachments;
  /** Each application's push settings, as this node last read them (see PushSettingsCache). */
  push: PushSettingsCache;
  /** Webhook events of user writes (`user.created`, `user.deleted`); none when absent. */
  webhooks?: ChatWebhooks;
  now: () => Date;
}
