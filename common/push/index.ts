export {
  ApnsBody,
  apnsProblems,
  FcmBody,
  newVapidKeys,
  PushOptionsBody,
  pushSettingsView,
  PushSettingsView,
  serviceAccountOf,
  WebPushBody,
  type PushSettings,
} from './settings.ts';
export { PUSH_DELIVERIES_KEPT, PushDeliveryRecord } from './deliveries.ts';
