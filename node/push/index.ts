export { addressOf, PUSH_DEVICES_PER_USER, pushDeviceView, PushDeviceView, RegisterPushBody } from './devices.ts';
export { pushRoutes } from './routes.ts';
export { PushSettingsCache, type PushSettingsSource } from './settings-cache.ts';
export { pushWorkers } from './workers.ts';
export type { PushLogSink } from './push-log.ts';
