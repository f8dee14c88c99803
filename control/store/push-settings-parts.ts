import type { PushSettings } from '../../common/push/index.ts';

/** A stored part of an application's push settings (PushSettingsStore): its value and when it was set. */
export interface StoredPushPart {
  value: unknown;
  updatedAt: string;
}

/** The settings the stored parts make (undefined: none), by part name. */
export function assemblePushSettings(appId: string, parts: ReadonlyMap<string, StoredPushPart>): PushSettings | undefined {
  if (parts.size === 0) return undefined;
  const updatedAt = [...parts.values()].reduce((latest, p) => (p.updatedAt > latest ? p.updatedAt : latest), '');
  const value = <T>(name: string) => parts.get(name)?.value as T | undefined;
  return {
    appId,
    privateMode: value<boolean>('options') ?? false,
    ...(parts.has('webPush') ? { webPush: value<NonNullable<PushSettings['webPush']>>('webPush')! } : {}),
    ...(parts.has('apns') ? { apns: value<NonNullable<PushSettings['apns']>>('apns')! } : {}),
    ...(parts.has('fcm') ? { fcm: value<NonNullable<PushSettings['fcm']>>('fcm')! } : {}),
    updatedAt,
  };
}
