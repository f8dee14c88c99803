import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ApiKey, ApiKeySummary, Application, ApplicationUsage, AttachmentSettings, AttachmentSettingsState, BlocklistEntry, MfaStatus, Profile, PushDelivery, PushSettings, TotpEnrolment, WebhookDelivery, WebhookEndpoint, WebhookTestResult } from '../../../sdk/management.ts';
import type { DashboardApi } from './api.ts';
import { describeFailure, type Failure } from './forms.ts';

/** The management API's calls as the views make them; the shapes are the SDK's (README, "The management interface"). */

export type { ApiKey, Application, AttachmentSettings, AttachmentSettingsState, BlocklistEntry, MfaStatus, Profile, PushDelivery, PushSettings, TotpEnrolment, WebhookDelivery, WebhookEndpoint, WebhookTestResult };
/** A key as listed, with when a node last accepted it (null: never). */
export type KeySummary = ApiKeySummary;
/** The application's figures as its nodes last flushed them; `days` are the last 30 UTC days, oldest first. */
export type Usage = ApplicationUsage;

const app = (appId: string) => `/api/client/apps/${encodeURIComponent(appId)}`;
const key = (appId: string, keyId: string) => `${app(appId)}/keys/${encodeURIComponent(keyId)}`;
const hook = (appId: string, webhookId: string) => `${app(appId)}/webhooks/${encodeURIComponent(webhookId)}`;

export const calls = (api: DashboardApi) => ({
  listApps: async () => (await api.call<{ applications: Application[] }>('GET', '/api/client/apps')).applications,
  getApp: (appId: string) => api.call<Application>('GET', app(appId)),
  createApp: (name: string) => api.call<Application>('POST', '/api/client/apps', { name }),
  renameApp: (appId: string, name: string) => api.call<Application>('PUT', app(appId), { name }),
  deleteApp: (appId: string) => api.call<void>('DELETE', app(appId)),
  listKeys: async (appId: string) => (await api.call<{ keys: KeySummary[] }>('GET', `${app(appId)}/keys`)).keys,
  createKey: (appId: string) => api.call<ApiKey>('POST', `${app(appId)}/keys`),
  revokeKey: (appId: string, keyId: string) => api.call<void>('DELETE', key(appId, keyId)),
  rotateKey: (appId: string, keyId: string) => api.call<ApiKey>('POST', `${key(appId, keyId)}/rotate`),
  listWebhooks: async (appId: string) => (await api.call<{ webhooks: WebhookEndpoint[] }>('GET', `${app(appId)}/webhooks`)).webhooks,
  createWebhook: (appId: string, input: { url: string; events: string[]; description?: string }) => api.call<WebhookEndpoint & { secret: string }>('POST', `${app(appId)}/webhooks`, input),
  setWebhookStatus: (appId: string, webhookId: string, status: WebhookEndpoint['status']) => api.call<WebhookEndpoint>('PUT', hook(appId, webhookId), { status }),
  /** `description: ''` removes it. */
  updateWebhook: (appId: string, webhookId: string, changes: { url: string; events: string[]; description: string }) => api.call<WebhookEndpoint>('PUT', hook(appId, webhookId), changes),
  deleteWebhook: (appId: string, webhookId: string) => api.call<void>('DELETE', hook(appId, webhookId)),
  revealWebhookSecret: async (appId: string, webhookId: string) => (await api.call<{ secret: string }>('GET', `${hook(appId, webhookId)}/secret`)).secret,
  rotateWebhookSecret: async (appId: string, webhookId: string) => (await api.call<{ secret: string }>('POST', `${hook(appId, webhookId)}/secret/rotate`)).secret,
  testWebhook: (appId: string, webhookId: string) => api.call<WebhookTestResult>('POST', `${hook(appId, webhookId)}/test`),
  listDeliveries: async (appId: string, webhookId: string) => (await api.call<{ deliveries: WebhookDelivery[] }>('GET', `${hook(appId, webhookId)}/deliveries?limit=50`)).deliveries,
  retryDelivery: (appId: string, webhookId: string, deliveryId: string) => api.call<WebhookDelivery>('POST', `${hook(appId, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`),
  usage: (appId: string) => api.call<Usage>('GET', `${app(appId)}/usage`),
  getBlocklist: (appId: string) => api.call<{ entries: BlocklistEntry[]; updatedAt?: string }>('GET', `${app(appId)}/blocklist`),
  setBlocklist: (appId: string, entries: BlocklistEntry[]) => api.call<{ entries: BlocklistEntry[]; updatedAt: string }>('PUT', `${app(appId)}/blocklist`, { entries }),
  getAttachmentSettings: (appId: string) => api.call<AttachmentSettingsState>('GET', `${app(appId)}/attachment-settings`),
  setAttachmentSettings: (appId: string, settings: AttachmentSettings) => api.call<AttachmentSettingsState>('PUT', `${app(appId)}/attachment-settings`, settings),
  getPush: (appId: string) => api.call<PushSettings>('GET', `${app(appId)}/push`),
  setWebPush: (appId: string, subject: string) => api.call<PushSettings>('PUT', `${app(appId)}/push/web-push`, { subject }),
  setApns: (appId: string, apns: { keyId: string; teamId: string; key: string; topic: string; environment: 'sandbox' | 'production' }) => api.call<PushSettings>('PUT', `${app(appId)}/push/apns`, apns),
  setFcm: (appId: string, serviceAccount: string) => api.call<PushSettings>('PUT', `${app(appId)}/push/fcm`, { serviceAccount }),
  setPrivateMode: (appId: string, privateMode: boolean) => api.call<PushSettings>('PATCH', `${app(appId)}/push`, { privateMode }),
  removePushProvider: (appId: string, provider: 'web-push' | 'apns' | 'fcm') => api.call<void>('DELETE', `${app(appId)}/push/${provider}`),
  /** The newest 50 push attempts, of one provider when named. */
  listPushDeliveries: async (appId: string, provider: PushDelivery['provider'] | undefined) =>
    (await api.call<{ deliveries: PushDelivery[] }>('GET', `${app(appId)}/push/deliveries?limit=50${provider ? `&provider=${provider}` : ''}`)).deliveries,
  profile: () => api.call<Profile>('GET', '/api/client/profile'),
  updateProfile: (input: { companyName?: string; email?: string; password?: string; currentPassword?: string }) => api.call<Profile>('PUT', '/api/client/profile', input),
  mfaStatus: () => api.call<MfaStatus>('GET', '/api/client/mfa'),
  enrolTotp: () => api.call<TotpEnrolment>('POST', '/api/client/mfa/totp'),
  confirmTotp: async (code: string) => (await api.call<{ recoveryCodes: string[] }>('POST', '/api/client/mfa/totp/confirm', { code })).recoveryCodes,
  disableTotp: (currentPassword: string, code: string) => api.call<void>('DELETE', '/api/client/mfa/totp', { currentPassword, code }),
});

export type Calls = ReturnType<typeof calls>;

export interface Loaded<T> {
  data: T | undefined;
  failure: Failure | undefined;
  loading: boolean;
  reload: () => Promise<void>;
  /** Replaces the data with what an action returned, without asking again. */
  set: (data: T) => void;
}

/**
 * Loads what a view shows when it opens (and when `deps` change). An answer that arrives after the
 * view moved on to other deps is dropped, so a slow answer never shows under the wrong heading.
 */
export function useLoaded<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [failure, setFailure] = useState<Failure | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await load();
      if (mine !== generation.current) return;
      setData(value);
      setFailure(undefined);
    } catch (error) {
      if (mine === generation.current) setFailure(describeFailure(error));
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    setData(undefined);
    void reload();
    return () => {
      generation.current++;
    };
  }, [reload]);
  return { data, failure, loading, reload, set: setData };
}
