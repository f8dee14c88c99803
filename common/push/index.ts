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
