import type { Registry } from 'prom-client';
import type { Logger } from '../../common/index.ts';
import type { Config } from '../../common/config/index.ts';
import type { NodeStore } from '../store/index.ts';
import { PushDelivery } from './delivery.ts';
import { PushLog, type PushLogSink } from './push-log.ts';
import { PushSenders } from './senders.ts';
import type { PushSettingsCache } from './settings-cache.ts';

export interface PushWorkersOptions {
  config: Pick<Config, 'PUSH_ALLOW_LOOPBACK' | 'PUSH_APNS_ORIGIN' | 'PUSH_FCM_ORIGIN' | 'PUSH_CHAT_MEMBERS_MAX' | 'PUSH_CHAT_INTERVAL_MS'>;
  store: NodeStore;
  settings: PushSettingsCache;
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  registry: Registry;
  /** Where the delivery log is written (the control store); none: metrics and log lines only. */
  deliveryLog?: PushLogSink;
  log: Logger;
}

/** A node's push delivery, built whole: the clients of the push services, the metrics and delivery log, and the outbox consumer. */
export function pushWorkers(o: PushWorkersOptions): { delivery: PushDelivery; close: () => Promise<void> } {
  const senders = new PushSenders({
    allowLoopback: o.config.PUSH_ALLOW_LOOPBACK,
    ...(o.config.PUSH_APNS_ORIGIN ? { apnsOrigin: o.config.PUSH_APNS_ORIGIN } : {}),
    ...(o.config.PUSH_FCM_ORIGIN ? { fcmOrigin: o.config.PUSH_FCM_ORIGIN } : {}),
  });
  const observer = new PushLog(o.registry, o.log, o.deliveryLog);
  const delivery = new PushDelivery({ store: o.store, settings: o.settings, senders, usersOnline: o.usersOnline, maxMembers: o.config.PUSH_CHAT_MEMBERS_MAX, intervalMs: o.config.PUSH_CHAT_INTERVAL_MS, observer, log: o.log });
  return {
    delivery,
    close: async () => {
      delivery.close();
      await observer.close();
      await senders.close();
    },
  };
}
