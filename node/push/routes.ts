import { randomUUID } from 'node:crypto';
import Type from 'typebox';
import { ApiError, defineRoute, type AnyRoute } from '../../common/index.ts';
import type { NodeContext } from '../context.ts';
import { addressOf, PUSH_DEVICES_PER_USER, pushDeviceView, PushDeviceView, RegisterPushBody } from './devices.ts';

const DeviceParams = Type.Object({ deviceId: Type.String({ format: 'uuid' }) });
const ChatParams = Type.Object({ chatId: Type.String({ format: 'uuid' }) });
const ChatPushBody = Type.Object({ muted: Type.Boolean({ description: 'true: no push of this chat reaches you (its messages still arrive over WebSocket and in history)' }) }, { additionalProperties: false });
const ChatPushView = Type.Object({ chatId: Type.String({ format: 'uuid' }), muted: Type.Boolean() });
const notMember = () => new ApiError('CHAT_NOT_FOUND', 'no such chat, or you are not a member');
const providerOf = { webPush: 'webPush', apns: 'apns', fcm: 'fcm' } as const;
const providerName = { webPush: 'Web Push', apns: 'APNs', fcm: 'FCM' } as const;

/**
 * A chat user's push devices (README, "Push notifications"): the application's VAPID public key to
 * subscribe a browser with, and the devices (Web Push subscriptions, APNs and FCM tokens) pushes
 * reach, at most PUSH_DEVICES_PER_USER; a device is registered only for a provider the application
 * has set.
 */
export function pushRoutes(ctx: NodeContext): AnyRoute[] {
  const auth = { verify: ctx.authenticateUser, security: 'userJwt', responses: { 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } };
  const tags = ['push (browser, user JWT)'];
  const jwtErrors = { 401: { description: 'JWT missing, invalid or expired' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/push/web-push-key',
      operationId: 'getWebPushKey',
      summary: 'The application’s VAPID public key: what a browser subscribes with (`applicationServerKey`)',
      tags,
      auth,
      responses: {
        200: { description: 'The key', schema: Type.Object({ publicKey: Type.String({ description: 'base64url, an uncompressed P-256 point' }) }) },
        404: { description: 'The application has not set Web Push (PUSH_NOT_CONFIGURED)' },
        ...jwtErrors,
      },
      handler: async ({ auth }) => {
        const settings = await ctx.push.get(auth.appId);
        if (!settings?.webPush) return new ApiError('PUSH_NOT_CONFIGURED', 'the application has not set Web Push');
        return { status: 200, body: { publicKey: settings.webPush.publicKey } };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/push/devices',
      operationId: 'registerPushDevice',
      summary: 'Register a device pushes reach: a Web Push subscription, or an APNs or FCM token',
      description:
        `At most ${PUSH_DEVICES_PER_USER} devices a user. The same subscription or token again is the device registered before (200, its keys updated). ` +
        'A subscription or token another user of the application had (the browser or phone signed in to another account) moves to this user.',
      tags,
      body: RegisterPushBody,
      auth,
      responses: {
        201: { description: 'Registered', schema: PushDeviceView },
        200: { description: 'Registered before: the same device', schema: PushDeviceView },
        400: { description: 'Not a subscription or token (VALIDATION_FAILED, naming the field): a Web Push endpoint that is not a public https:// URL, keys of the wrong length' },
        403: { description: `The user has ${PUSH_DEVICES_PER_USER} devices (PUSH_DEVICE_LIMIT_REACHED), or is banned` },
        404: { description: 'The application has not set this provider (PUSH_NOT_CONFIGURED)' },
        ...jwtErrors,
      },
      handler: async ({ body, auth }) => {
        const address = addressOf(body, ctx.config.PUSH_ALLOW_LOOPBACK);
        if (Array.isArray(address)) return new ApiError('VALIDATION_FAILED', `${address[0]!.path.slice('/body/'.length)} ${address[0]!.message}`, { errors: address });
        const settings = await ctx.push.get(auth.appId);
        if (!settings?.[providerOf[address.kind]]) return new ApiError('PUSH_NOT_CONFIGURED', `the application has not set ${providerName[address.kind]}`);
        const device = { appId: auth.appId, userId: auth.userId, deviceId: randomUUID(), address, createdAt: ctx.now().toISOString() };
        const r = await ctx.store.push.register(device, PUSH_DEVICES_PER_USER);
        if (r.result === 'limit') return new ApiError('PUSH_DEVICE_LIMIT_REACHED', `you have ${PUSH_DEVICES_PER_USER} push devices: remove one first`);
        return { status: r.result === 'created' ? 201 : 200, body: pushDeviceView(r.device) };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/push/devices',
      operationId: 'listPushDevices',
      summary: 'The user’s push devices, oldest first',
      tags,
      auth,
      responses: { 200: { description: 'The devices', schema: Type.Object({ devices: Type.Array(PushDeviceView) }) }, ...jwtErrors },
      handler: async ({ auth }) => ({ status: 200, body: { devices: (await ctx.store.push.list(auth.appId, auth.userId)).map(pushDeviceView) } }),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/push/devices/:deviceId',
      operationId: 'removePushDevice',
      summary: 'Remove a push device: nothing more is pushed to it',
      tags,
      params: DeviceParams,
      auth,
      responses: { 204: { description: 'Removed' }, 404: { description: 'No such device of this user (PUSH_DEVICE_NOT_FOUND)' }, ...jwtErrors },
      handler: async ({ params, auth }) => {
        if ((await ctx.store.push.remove(auth.appId, auth.userId, params.deviceId)) === 'not-found') return new ApiError('PUSH_DEVICE_NOT_FOUND', 'no such push device of yours');
        return { status: 204 };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/push/chats/:chatId',
      operationId: 'getChatPush',
      summary: 'Whether you turned off pushes of a chat',
      tags,
      params: ChatParams,
      auth,
      responses: { 200: { description: 'The setting (pushes are on until turned off)', schema: ChatPushView }, 404: { description: 'No such chat, or you are not a member (CHAT_NOT_FOUND)' }, ...jwtErrors },
      handler: async ({ params, auth }) => {
        if (!(await ctx.store.chats.member(auth.appId, params.chatId, auth.userId))) return notMember();
        return { status: 200, body: { chatId: params.chatId, muted: await ctx.store.push.chatMuted(auth.appId, auth.userId, params.chatId) } };
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/push/chats/:chatId',
      operationId: 'setChatPush',
      summary: 'Turn pushes of a chat off (mute notifications) or on again, for you only',
      tags,
      params: ChatParams,
      body: ChatPushBody,
      auth,
      responses: { 200: { description: 'Set: applies to the next message', schema: ChatPushView }, 404: { description: 'No such chat, or you are not a member (CHAT_NOT_FOUND)' }, ...jwtErrors },
      handler: async ({ params, body, auth }) => {
        if (!(await ctx.store.chats.member(auth.appId, params.chatId, auth.userId))) return notMember();
        await ctx.store.push.muteChat(auth.appId, auth.userId, params.chatId, body.muted);
        return { status: 200, body: { chatId: params.chatId, muted: body.muted } };
      },
    }),
  ];
}
