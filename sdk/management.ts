import { ChatApiError, ChatStateError } from './errors.ts';
import { request } from './http.ts';
import type { BlocklistEntry } from './types.ts';
export type { BlocklistEntry } from './types.ts';

export * from './errors.ts';
export { isRetryable, RETRYABLE_CODES, type ErrorCode } from './codes.ts';

export interface AccountSession {
  accessToken: string;
  email: string;
  role: 'CLIENT';
  refreshToken: string;
  expiresIn?: number;
  mfaRequired?: false;
}

/** A login of an account with MFA on: no session until `verifyMfa` with a code. */
export interface MfaChallenge {
  mfaRequired: true;
  /** Single use, valid 5 minutes (MFA_TOKEN_TTL_SECONDS); a bearer nowhere. */
  mfaToken: string;
  email: string;
  role: 'CLIENT';
}

export interface TotpEnrolment {
  /** Base32 secret, for typing into an authenticator app. */
  secret: string;
  otpauthUri: string;
  /** The URI as a QR code (an SVG document). */
  qrSvg: string;
}

export interface MfaStatus {
  enabled: boolean;
  enabledAt?: string;
  recoveryCodesLeft: number;
}

export interface Application {
  id: string;
  clientId: string;
  name: string;
  status: 'ACTIVE' | 'SUSPENDED';
  tier: 'DEMO' | 'STANDARD';
  clusterId: string;
  createdAt: string;
  updatedAt: string;
  type?: 'DEMO' | 'STANDARD';
  clusterEndpoint?: string;
  clusterName?: string;
  clusterStatus?: 'ACTIVE' | 'DRAINING' | 'OFFLINE';
}

export interface ApiKey {
  id: string;
  token: string;
  /** The token's first 8 characters: alike for every key (the JWT header). */
  keyPrefix: string;
  /** The token's last 4 characters: what tells keys apart. */
  keySuffix: string;
  audience: string;
  tier: 'DEMO' | 'STANDARD';
  createdAt: string;
}

export interface ApiKeySummary extends Omit<ApiKey, 'token' | 'keySuffix'> {
  /** Absent on keys created before it was kept. */
  keySuffix?: string;
  status: 'ACTIVE' | 'REVOKED';
  revokedAt?: string;
  /** When a cluster node last accepted the key (to within the usage flush interval); null if never. */
  lastUsedAt: string | null;
}

/** A webhook endpoint of an application (README, "Webhooks"); `secret` only where shown. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  events: string[];
  description?: string;
  status: 'ACTIVE' | 'DISABLED';
  disabledReason?: string;
  createdAt: string;
  updatedAt: string;
}

/** An application's before-send hook (README, "Before-send hook"); `secret` only when first set. */
export interface BeforeSendHook {
  url: string;
  /** How long a node waits for the answer: 50–2000 ms. */
  timeoutMs: number;
  /** When the hook fails: store the message as sent (`open`) or refuse it with BEFORE_SEND_FAILED (`closed`). */
  failurePolicy: 'open' | 'closed';
  createdAt: string;
  updatedAt: string;
}

/** An application's attachment settings (README, "Attachments"): each narrows the deployment's limit; absent: the deployment's. */
export interface AttachmentSettings {
  /** Largest file, in bytes. */
  maxFileBytes?: number;
  /** Most attachment bytes the application may store (files and thumbnails). */
  maxTotalBytes?: number;
  /** Only these types are accepted (`image/*`, `application/pdf`, …), as sniffed from a file's bytes. */
  allowedTypes?: string[];
  /** These types are refused, besides those the deployment always refuses. */
  refusedTypes?: string[];
}

/** An application's push providers as the management API shows them (no secret). */
export interface PushSettings {
  privateMode: boolean;
  webPush?: { subject: string; publicKey: string; createdAt: string };
  apns?: { keyId: string; teamId: string; topic: string; environment: string; updatedAt: string };
  fcm?: { projectId: string; clientEmail: string; updatedAt: string };
  updatedAt?: string;
}

/** One attempt in an application's push delivery log (README, "Push notifications"): ids and the outcome, never the message. */
export interface PushDelivery {
  id: string;
  provider: 'webPush' | 'apns' | 'fcm';
  /** The push: every attempt of one push to one device carries it. */
  eventId: string;
  messageId: string;
  /** The recipient. */
  userId: string;
  deviceId: string;
  /** 1 for the first attempt of the push. */
  attempt: number;
  /** sent: the push service took it; gone: the device is no longer there (it was removed); retry: tried again at `nextRetryAt`; failed: refused for good. */
  result: 'sent' | 'gone' | 'retry' | 'failed';
  /** The push service's HTTP status, when it answered. */
  statusCode?: number;
  /** The push service's reason, or the network error. */
  reason?: string;
  durationMs: number;
  nextRetryAt?: string;
  at: string;
}

/** The settings, when they were set, and the deployment's limits they narrow. */
export interface AttachmentSettingsState {
  settings: AttachmentSettings;
  updatedAt?: string;
  deployment: { maxFileBytes: number; maxTotalBytes: number; refusedTypes: string[] };
}

export interface WebhookTestResult {
  delivered: boolean;
  eventId: string;
  statusCode?: number;
  durationMs: number;
  error?: string;
}

/** One attempt in an endpoint's delivery log (README, "Delivery log"); never the body. */
export interface WebhookDelivery {
  id: string;
  /** The event: the `webhook-id` of every attempt of it. */
  eventId: string;
  type: string;
  /** 1 for the first attempt of the event at this endpoint. */
  attempt: number;
  status: 'succeeded' | 'failed';
  statusCode?: number;
  durationMs: number;
  error?: string;
  /** When the next attempt is due, if one is scheduled. */
  nextRetryAt?: string;
  at: string;
}

/** An application's usage (GET /api/client/apps/:appId/usage); figures lag by the nodes' flush interval. */
export interface ApplicationUsage {
  appId: string;
  registeredUsers: number;
  chats: number;
  messages: number;
  /** Bytes of attachment files stored now (finalized files and their thumbnails). */
  storedFileBytes: number;
  concurrentUsers: { current: number; peak: number };
  /** The last 30 UTC days, oldest first; the last is today. */
  days: { day: string; messages: number; peakUsers: number }[];
  asOf: string;
}

export interface Profile {
  id: string;
  companyName: string;
  email: string;
  role: 'CLIENT';
  createdAt: string;
  updatedAt: string;
}

/**
 * The management interface (dashboard accounts, applications, API keys) for scripts and tests.
 * Keeps the session: `register` or `login` first; `refresh` rotates the tokens.
 */
export class ManagementClient {
  private session: AccountSession | undefined;
  /** The challenge of the last login that answered mfaRequired, until verified. */
  private challenge: MfaChallenge | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: { baseUrl: string; fetch?: typeof fetch }) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  get accessToken(): string | undefined {
    return this.session?.accessToken;
  }

  private call<T>(path: string, init: Parameters<typeof request>[2] = {}): Promise<T> {
    if (!this.session) return Promise.reject(new ChatStateError('register or log in first'));
    return request<T>(this.options.baseUrl, path, { ...init, token: this.session.accessToken }, this.fetchImpl);
  }

  async register(input: { companyName: string; email: string; password: string }): Promise<AccountSession> {
    this.session = await request<AccountSession>(this.options.baseUrl, 'api/auth/register', { method: 'POST', body: input }, this.fetchImpl);
    return this.session;
  }

  /**
   * Logs in. With MFA on the account, resolves with the challenge (`mfaRequired: true`) and no
   * session: complete it with `verifyMfa(code)`.
   */
  async login(input: { email: string; password: string }): Promise<AccountSession | MfaChallenge> {
    const answer = await request<AccountSession | MfaChallenge>(this.options.baseUrl, 'api/auth/login', { method: 'POST', body: input }, this.fetchImpl);
    if (answer.mfaRequired === true) {
      this.challenge = answer;
      this.session = undefined;
    } else {
      this.challenge = undefined;
      this.session = answer;
    }
    return answer;
  }

  /** Completes the last login's challenge with a 6-digit code or an unused recovery code. */
  async verifyMfa(code: string, mfaToken = this.challenge?.mfaToken): Promise<AccountSession> {
    if (!mfaToken) throw new ChatStateError('log in first: no login is waiting for a code');
    this.session = await request<AccountSession>(this.options.baseUrl, 'api/auth/mfa/verify', { method: 'POST', body: { mfaToken, code } }, this.fetchImpl);
    this.challenge = undefined;
    return this.session;
  }

  mfaStatus(): Promise<MfaStatus> {
    return this.call('api/client/mfa');
  }

  /** Starts a TOTP enrolment (no effect until `confirmTotp`). */
  enrolTotp(): Promise<TotpEnrolment> {
    return this.call('api/client/mfa/totp', { method: 'POST' });
  }

  /** Confirms the enrolment with a current code: MFA is on; returns the ten recovery codes (shown once). */
  async confirmTotp(code: string): Promise<string[]> {
    return (await this.call<{ recoveryCodes: string[] }>('api/client/mfa/totp/confirm', { method: 'POST', body: { code } })).recoveryCodes;
  }

  async disableTotp(currentPassword: string, code: string): Promise<void> {
    await this.call('api/client/mfa/totp', { method: 'DELETE', body: { currentPassword, code } });
  }

  async refresh(): Promise<void> {
    const s = this.session;
    if (!s) throw new ChatStateError('register or log in first');
    const next = await request<{ accessToken: string; refreshToken: string }>(this.options.baseUrl, 'api/auth/refresh', { method: 'POST', body: { refreshToken: s.refreshToken }, token: s.accessToken }, this.fetchImpl);
    this.session = { ...s, ...next };
  }

  async logout(): Promise<void> {
    await this.call('api/auth/logout', { method: 'POST', body: { refreshToken: this.session?.refreshToken } });
    this.session = undefined;
  }

  profile(): Promise<Profile> {
    return this.call('api/client/profile');
  }

  updateProfile(input: { companyName?: string; email?: string; password?: string; currentPassword?: string }): Promise<Profile> {
    return this.call('api/client/profile', { method: 'PUT', body: input });
  }

  createApplication(name: string): Promise<Application> {
    return this.call('api/client/apps', { method: 'POST', body: { name } });
  }

  async listApplications(): Promise<Application[]> {
    return (await this.call<{ applications: Application[] }>('api/client/apps')).applications;
  }

  getApplication(appId: string): Promise<Application> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}`);
  }

  updateApplication(appId: string, name: string): Promise<Application> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}`, { method: 'PUT', body: { name } });
  }

  async deleteApplication(appId: string): Promise<void> {
    await this.call(`api/client/apps/${encodeURIComponent(appId)}`, { method: 'DELETE' });
  }

  createApiKey(appId: string): Promise<ApiKey> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/keys`, { method: 'POST' });
  }

  async listApiKeys(appId: string): Promise<ApiKeySummary[]> {
    return (await this.call<{ keys: ApiKeySummary[] }>(`api/client/apps/${encodeURIComponent(appId)}/keys`)).keys;
  }

  async revokeApiKey(appId: string, keyId: string): Promise<void> {
    await this.call(`api/client/apps/${encodeURIComponent(appId)}/keys/${encodeURIComponent(keyId)}`, { method: 'DELETE' });
  }

  createWebhook(appId: string, input: { url: string; events: string[]; description?: string }): Promise<WebhookEndpoint & { secret: string }> {
    return this.call(`${webhooks(appId)}`, { method: 'POST', body: input });
  }

  async listWebhooks(appId: string): Promise<WebhookEndpoint[]> {
    return (await this.call<{ webhooks: WebhookEndpoint[] }>(webhooks(appId))).webhooks;
  }

  getWebhook(appId: string, webhookId: string): Promise<WebhookEndpoint> {
    return this.call(`${webhooks(appId)}/${encodeURIComponent(webhookId)}`);
  }

  /** Changes url, events or description (`''` removes it), or turns the endpoint off and on. */
  updateWebhook(appId: string, webhookId: string, changes: { url?: string; events?: string[]; description?: string; status?: 'ACTIVE' | 'DISABLED' }): Promise<WebhookEndpoint> {
    return this.call(`${webhooks(appId)}/${encodeURIComponent(webhookId)}`, { method: 'PUT', body: changes });
  }

  async deleteWebhook(appId: string, webhookId: string): Promise<void> {
    await this.call(`${webhooks(appId)}/${encodeURIComponent(webhookId)}`, { method: 'DELETE' });
  }

  async revealWebhookSecret(appId: string, webhookId: string): Promise<string> {
    return (await this.call<{ secret: string }>(`${webhooks(appId)}/${encodeURIComponent(webhookId)}/secret`)).secret;
  }

  async rotateWebhookSecret(appId: string, webhookId: string): Promise<string> {
    return (await this.call<{ secret: string }>(`${webhooks(appId)}/${encodeURIComponent(webhookId)}/secret/rotate`, { method: 'POST' })).secret;
  }

  /** Sends a signed `webhook.test` event to the endpoint now. */
  testWebhook(appId: string, webhookId: string): Promise<WebhookTestResult> {
    return this.call(`${webhooks(appId)}/${encodeURIComponent(webhookId)}/test`, { method: 'POST' });
  }

  /** The endpoint's most recent delivery attempts, newest first (`limit` 1–100, default 50). */
  async listWebhookDeliveries(appId: string, webhookId: string, options: { limit?: number } = {}): Promise<WebhookDelivery[]> {
    return (await this.call<{ deliveries: WebhookDelivery[] }>(`${webhooks(appId)}/${encodeURIComponent(webhookId)}/deliveries`, { query: { limit: options.limit } })).deliveries;
  }

  /** Sends a logged attempt's event again now (same body and `webhook-id`, the current secret and URL); the new attempt. */
  retryWebhookDelivery(appId: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    return this.call(`${webhooks(appId)}/${encodeURIComponent(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`, { method: 'POST' });
  }

  /**
   * Sets the application's before-send hook (an omitted field takes its default: 500 ms, `open`).
   * `secret` is there when the hook was not set before; later changes keep it.
   */
  setBeforeSendHook(appId: string, input: { url: string; timeoutMs?: number; failurePolicy?: 'open' | 'closed' }): Promise<BeforeSendHook & { secret?: string }> {
    return this.call(beforeSend(appId), { method: 'PUT', body: input });
  }

  /** The application's before-send hook; undefined when it has none. */
  async getBeforeSendHook(appId: string): Promise<BeforeSendHook | undefined> {
    try {
      return await this.call<BeforeSendHook>(beforeSend(appId));
    } catch (error) {
      if (error instanceof ChatApiError && error.code === 'BEFORE_SEND_NOT_FOUND') return undefined;
      throw error;
    }
  }

  async deleteBeforeSendHook(appId: string): Promise<void> {
    await this.call(beforeSend(appId), { method: 'DELETE' });
  }

  async revealBeforeSendSecret(appId: string): Promise<string> {
    return (await this.call<{ secret: string }>(`${beforeSend(appId)}/secret`)).secret;
  }

  async rotateBeforeSendSecret(appId: string): Promise<string> {
    return (await this.call<{ secret: string }>(`${beforeSend(appId)}/secret/rotate`, { method: 'POST' })).secret;
  }

  /** The application's blocklist (README, "Moderation"): the list the backend sets with its API key. */
  getBlocklist(appId: string): Promise<{ entries: BlocklistEntry[]; updatedAt?: string }> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/blocklist`);
  }

  /** Replaces the application's blocklist (at most 10,000 entries of 1–100 characters); every node applies it at once. */
  setBlocklist(appId: string, entries: BlocklistEntry[]): Promise<{ entries: BlocklistEntry[]; updatedAt: string }> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/blocklist`, { method: 'PUT', body: { entries } });
  }

  /** The application's attachment settings (`{}` until set) and the deployment's limits. */
  getAttachmentSettings(appId: string): Promise<AttachmentSettingsState> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/attachment-settings`);
  }

  /** Replaces the application's attachment settings (an omitted field: the deployment's); every node applies them to the next upload. */
  setAttachmentSettings(appId: string, settings: AttachmentSettings): Promise<AttachmentSettingsState & { updatedAt: string }> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/attachment-settings`, { method: 'PUT', body: settings });
  }

  /** The application's push providers, without their secrets (README, "Push notifications"). */
  getPushSettings(appId: string): Promise<PushSettings> {
    return this.call(push(appId));
  }

  /** Turns on Web Push: the first call makes the VAPID key pair (its public key in the answer), later ones change only `subject`. */
  setWebPush(appId: string, subject: string): Promise<PushSettings> {
    return this.call(`${push(appId)}/web-push`, { method: 'PUT', body: { subject } });
  }

  /** Sets APNs (token authentication); `key` is the .p8 file's text, never shown again. */
  setApns(appId: string, apns: { keyId: string; teamId: string; key: string; topic: string; environment: 'sandbox' | 'production' }): Promise<PushSettings> {
    return this.call(`${push(appId)}/apns`, { method: 'PUT', body: apns });
  }

  /** Sets FCM (HTTP v1) from the service account's JSON key file, as text; its private key is never shown again. */
  setFcm(appId: string, serviceAccount: string): Promise<PushSettings> {
    return this.call(`${push(appId)}/fcm`, { method: 'PUT', body: { serviceAccount } });
  }

  /** Private mode: pushes carry ids only. */
  setPushOptions(appId: string, options: { privateMode: boolean }): Promise<PushSettings> {
    return this.call(push(appId), { method: 'PATCH', body: options });
  }

  /** The application's most recent push attempts, newest first: one provider's when named (`limit` 1–100, default 50). */
  async getPushDeliveries(appId: string, options: { provider?: PushDelivery['provider']; limit?: number } = {}): Promise<PushDelivery[]> {
    return (await this.call<{ deliveries: PushDelivery[] }>(`${push(appId)}/deliveries`, { query: { provider: options.provider, limit: options.limit } })).deliveries;
  }

  /** Removes a provider and its secret; PUSH_PROVIDER_NOT_SET when it is not set. */
  async removePushProvider(appId: string, provider: 'web-push' | 'apns' | 'fcm'): Promise<void> {
    await this.call(`${push(appId)}/${provider}`, { method: 'DELETE' });
  }

  getUsage(appId: string): Promise<ApplicationUsage> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/usage`);
  }

  rotateApiKey(appId: string, keyId: string): Promise<ApiKey> {
    return this.call(`api/client/apps/${encodeURIComponent(appId)}/keys/${encodeURIComponent(keyId)}/rotate`, { method: 'POST' });
  }
}

const webhooks = (appId: string) => `api/client/apps/${encodeURIComponent(appId)}/webhooks`;
const push = (appId: string) => `api/client/apps/${encodeURIComponent(appId)}/push`;
const beforeSend = (appId: string) => `api/client/apps/${encodeURIComponent(appId)}/before-send`;
