/**
 * Every public method of the three SDK clients (ChatServer, ChatClient, ManagementClient), called
 * against one live standalone deployment, with its result asserted: shapes (spec §2.4 messages,
 * the management forms), the events each operation produces (awaited through `on`, never slept
 * for), error classes with the server's codes, MessagePack both ways, an action timeout, and
 * `onSignedOut`.
 */
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { unpack } from 'msgpackr';
import {
  applyReaction,
  ChatApiError,
  ChatClient,
  ChatStateError,
  ChatTimeoutError,
  exponentialBackoff,
  type ChatSummary,
  type ConnectionStatus,
  type EventOf,
  type Member,
  type Message,
  type Reaction,
  type ReplyTo,
  type ServerEventType,
  type User,
  type UserSession,
  type WebSocketConstructor,
} from 'chat-service/client';
import { ChatServer, ChatApiError as ServerApiError, ChatStateError as ServerStateError } from 'chat-service/server';
import { ManagementClient, ChatApiError as ManagementApiError, ChatStateError as ManagementStateError } from 'chat-service/management';
import { Secret, TOTP } from 'otpauth';
import { client as httpClient, removeDir, startService } from '../helpers/index.ts';

const WS = WebSocket as unknown as WebSocketConstructor;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
/** A guard, not a sleep: how long an awaited event may take before the test fails naming it. */
const EVENT_WAIT_MS = 5_000;

// ---- helpers --------------------------------------------------------------------------------------

/** What `what` rejected (or threw) with; an Error saying so if it resolved. */
async function rejection(what: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof what === 'function' ? what() : what);
  } catch (error) {
    return error;
  }
  return new Error('expected a rejection, but it resolved');
}

/** Asserts a ChatApiError with the server's code (and HTTP status; 0 for WebSocket error frames). */
async function expectApiError(t: Test, what: Promise<unknown> | (() => unknown), code: string, status: number, label: string): Promise<ChatApiError | undefined> {
  const error = await rejection(what);
  if (!(error instanceof ChatApiError)) {
    t.fail(`${label}: expected ChatApiError ${code}, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    return undefined;
  }
  t.equal(error.code, code, `${label}: code ${code}`);
  t.equal(error.status, status, `${label}: status ${status}`);
  t.equal(error.problem.code, code, `${label}: the problem carries the code`);
  return error;
}

async function expectStateError(t: Test, what: Promise<unknown> | (() => unknown), pattern: RegExp, label: string): Promise<void> {
  const error = await rejection(what);
  t.ok(error instanceof ChatStateError, `${label}: ChatStateError (${error instanceof Error ? error.message : String(error)})`);
  if (error instanceof Error) t.match(error.message, pattern, `${label}: message`);
}

/** The next event of `type` that matches, through the SDK's subscription; rejects after EVENT_WAIT_MS. */
function nextEvent<T extends ServerEventType>(c: ChatClient, type: T, match: (e: EventOf<T>) => boolean = () => true): Promise<EventOf<T>> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      off();
      reject(new Error(`no matching ${type} event within ${EVENT_WAIT_MS} ms`));
    }, EVENT_WAIT_MS);
    const off = c.on(type, (e) => {
      if (!match(e)) return;
      clearTimeout(guard);
      off();
      resolve(e);
    });
  });
}

function nextStatus(c: ChatClient, status: ConnectionStatus): Promise<void> {
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      off();
      reject(new Error(`status never became ${status} within ${EVENT_WAIT_MS} ms`));
    }, EVENT_WAIT_MS);
    const off = c.on('status', (s) => {
      if (s !== status) return;
      clearTimeout(guard);
      off();
      resolve();
    });
  });
}

/** Keys of `value` outside `allowed`, and `required` keys it lacks. */
function keyProblems(value: object, required: string[], optional: string[] = []): { unknown: string[]; missing: string[] } {
  const allowed = new Set([...required, ...optional]);
  const keys = Object.keys(value);
  return { unknown: keys.filter((k) => !allowed.has(k)), missing: required.filter((k) => !keys.includes(k)) };
}

function checkKeys(t: Test, value: object, required: string[], optional: string[], label: string): void {
  t.same(keyProblems(value, required, optional), { unknown: [], missing: [] }, `${label}: exactly the documented fields`);
}

const jwtPayload = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

function checkUser(t: Test, u: User, expected: Partial<User>, label: string): void {
  checkKeys(t, u, ['userId', 'username', 'displayName', 'createdAt', 'updatedAt'], [], label);
  t.match(u.userId, UUID, `${label}: userId is a UUID`);
  t.match(u.createdAt, ISO, `${label}: createdAt`);
  t.match(u.updatedAt, ISO, `${label}: updatedAt`);
  t.has(u, expected, `${label}: values`);
}

function checkSession(t: Test, s: UserSession, userId: string, label: string): void {
  checkKeys(t, s, ['jwt', 'refreshToken', 'userId'], ['expiresIn'], `${label}: {jwt, refreshToken, userId}`);
  t.equal(s.userId, userId, `${label}: userId`);
  t.match(s.jwt, JWT, `${label}: jwt is a JWT`);
  t.equal(jwtPayload(s.jwt).sub, userId, `${label}: the JWT's subject is the user`);
  t.match(s.refreshToken, /^urt_/, `${label}: refreshToken`);
  t.equal(s.expiresIn, 900, `${label}: expiresIn (default JWT lifetime)`);
}

const REPLY_KEYS = ['chatId', 'timeStamp', 'messageId', 'senderId', 'content', 'edited'];
const MESSAGE_KEYS = [...REPLY_KEYS, 'reactions', 'reactionCounts', 'type', 'seq', 'deleted'];

function checkReaction(t: Test, r: Reaction, m: { chatId: string; messageId: string }, label: string): void {
  checkKeys(t, r, ['reactionId', 'chatId', 'messageId', 'senderId', 'reaction', 'createdAt'], [], label);
  t.match(r.reactionId, UUID, `${label}: reactionId`);
  t.equal(r.chatId, m.chatId, `${label}: chatId`);
  t.equal(r.messageId, m.messageId, `${label}: messageId`);
  t.match(r.senderId, UUID, `${label}: senderId`);
  t.match(r.createdAt, ISO, `${label}: createdAt`);
}

function checkReply(t: Test, r: ReplyTo, of: Message, label: string): void {
  checkKeys(t, r, REPLY_KEYS, ['editedAt'], `${label} (flattened: no seq, replyTo or reactions)`);
  const expected: ReplyTo = { chatId: of.chatId, timeStamp: of.timeStamp, messageId: of.messageId, senderId: of.senderId, content: of.content, edited: of.edited };
  if (of.editedAt !== undefined) expected.editedAt = of.editedAt;
  t.same(r, expected, `${label}: the replied-to message`);
}

/** Spec §2.4's shape plus seq and the tombstone fields, and the expected values. */
function checkMessage(t: Test, m: Message, expected: Partial<Message>, label: string): void {
  checkKeys(t, m, MESSAGE_KEYS, ['editedAt', 'replyTo', 'deletedAt', 'ownReactions', 'data'], label);
  t.match(m.chatId, UUID, `${label}: chatId`);
  t.match(m.messageId, UUID, `${label}: messageId`);
  t.match(m.senderId, UUID, `${label}: senderId`);
  t.match(m.timeStamp, ISO, `${label}: timeStamp`);
  t.type(m.content, 'string', `${label}: content`);
  t.ok(Number.isInteger(m.seq) && m.seq >= 1, `${label}: seq is a positive integer`);
  t.equal(m.edited, m.editedAt !== undefined, `${label}: editedAt present exactly when edited`);
  if (m.editedAt !== undefined) t.match(m.editedAt, ISO, `${label}: editedAt`);
  t.equal(m.deleted, m.deletedAt !== undefined, `${label}: deletedAt present exactly when deleted`);
  if (m.deletedAt !== undefined) t.match(m.deletedAt, ISO, `${label}: deletedAt`);
  t.ok(Array.isArray(m.reactions), `${label}: reactions is an array`);
  m.reactions.forEach((r, i) => checkReaction(t, r, m, `${label}: reaction ${i}`));
  t.has(m, expected, `${label}: values`);
}

function checkSummary(t: Test, c: ChatSummary, expected: Partial<ChatSummary>, label: string): void {
  checkKeys(t, c, ['chatId', 'type', 'createdBy', 'createdAt', 'updatedAt', 'lastSeq', 'lastActivityAt', 'role', 'readSeq', 'unreadCount', 'mentionCount', 'threadUnreadCount', 'memberCount'], ['name', 'lastMessage', 'peer', 'data'], label);
  t.match(c.chatId, UUID, `${label}: chatId`);
  t.match(c.createdAt, ISO, `${label}: createdAt`);
  t.match(c.updatedAt, ISO, `${label}: updatedAt`);
  t.match(c.lastActivityAt, ISO, `${label}: lastActivityAt`);
  t.equal(c.unreadCount, c.lastSeq - c.readSeq, `${label}: unreadCount = lastSeq - readSeq`);
  t.has(c, expected, `${label}: values`);
}

function checkMember(t: Test, m: Member, expected: Partial<Member>, label: string): void {
  checkKeys(t, m, ['userId', 'role', 'joinedAt', 'readSeq'], [], label);
  t.match(m.joinedAt, ISO, `${label}: joinedAt`);
  t.has(m, expected, `${label}: values`);
}

// ---- the deployment -------------------------------------------------------------------------------

const svc = await startService();
t.teardown(async () => {
  await svc.stop();
  removeDir(svc.dataDir);
});

/** The integrator's setup: an account, an application, an API key, its endpoint. */
const owner = new ManagementClient({ baseUrl: svc.controlUrl });
await owner.register({ companyName: 'Operations', email: `ops-owner-${process.pid}-${Date.now()}@example.com`, password: 'operations-password-1' });
const chatApp = await owner.getApplication((await owner.createApplication('operations')).id);
const chatKey = await owner.createApiKey(chatApp.id);
const endpoint = chatApp.clusterEndpoint!;
const server = new ChatServer({ baseUrl: endpoint, apiKey: chatKey.token });
let userCounter = 0;
const newUser = (name: string, displayName?: string) => server.registerUser({ username: `${name}-${++userCounter}`, ...(displayName ? { displayName } : {}) });

/** A ChatClient signed in as `user` (JSON unless told otherwise). */
async function clientFor(t: Test, user: User, options: Partial<ConstructorParameters<typeof ChatClient>[0]> = {}): Promise<ChatClient> {
  const c = new ChatClient({ baseUrl: endpoint, WebSocket: WS, ...options });
  c.setAuth(await server.signIn({ userId: user.userId }));
  t.teardown(() => c.close());
  return c;
}

// ---- ManagementClient -----------------------------------------------------------------------------

t.test('ManagementClient: every method, with the documented shapes', async (t) => {
  // A fetch that remembers what each call sent, to see which refresh token a refresh presented.
  const sent: { path: string; body: unknown }[] = [];
  const recordingFetch: typeof fetch = (input, init) => {
    sent.push({ path: new URL(String(input)).pathname, body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined });
    return fetch(input, init);
  };
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl, fetch: recordingFetch });
  t.equal(mgmt.accessToken, undefined, 'no access token before register');
  t.equal(ManagementStateError, ChatStateError, 'the entry points share their error classes');
  t.equal(ManagementApiError, ChatApiError, 'ChatApiError too');
  await expectStateError(t, async () => mgmt.profile(), /register or log in first/, 'profile before register');

  const email = `Ops-${process.pid}-${Date.now()}@Example.com`;
  const password1 = 'first-password-1';
  const reg = await mgmt.register({ companyName: 'Ops Test', email, password: password1 });
  checkKeys(t, reg, ['accessToken', 'email', 'role', 'refreshToken'], ['expiresIn', 'mfaRequired'], 'register');
  t.equal(reg.email, email.toLowerCase(), 'register: e-mail stored lower-cased');
  t.equal(reg.role, 'CLIENT', 'register: role CLIENT');
  t.equal(reg.expiresIn, 900, 'register: expiresIn 900');
  t.match(reg.accessToken, JWT, 'register: accessToken is a JWT');
  t.match(reg.refreshToken, /^rt_/, 'register: refreshToken');
  t.equal(mgmt.accessToken, reg.accessToken, 'accessToken getter holds the session');

  const profile = await mgmt.profile();
  checkKeys(t, profile, ['id', 'companyName', 'email', 'role', 'createdAt', 'updatedAt'], [], 'profile');
  t.has(profile, { companyName: 'Ops Test', email: email.toLowerCase(), role: 'CLIENT' }, 'profile: values');
  t.match(profile.id, UUID, 'profile: id is a UUID');

  const renamed = await mgmt.updateProfile({ companyName: 'Ops Renamed' });
  t.has(renamed, { id: profile.id, companyName: 'Ops Renamed', email: profile.email, createdAt: profile.createdAt }, 'updateProfile: company renamed');
  t.ok(renamed.updatedAt >= profile.updatedAt, 'updateProfile: updatedAt moved on');
  t.same(await mgmt.profile(), renamed, 'profile reads the update back');

  // login: a second session of the same account.
  const other = new ManagementClient({ baseUrl: svc.controlUrl });
  const login = await other.login({ email, password: password1 });
  checkKeys(t, login, ['accessToken', 'email', 'role', 'refreshToken', 'mfaRequired'], ['expiresIn'], 'login');
  t.has(login, { mfaRequired: false, email: email.toLowerCase(), role: 'CLIENT' }, 'login: values');
  t.equal((await other.profile()).id, profile.id, 'the second session sees the same account');

  await expectApiError(t, mgmt.updateProfile({ password: 'second-password-2' }), 'VALIDATION_FAILED', 400, 'password change without currentPassword');
  await expectApiError(t, mgmt.updateProfile({ password: 'second-password-2', currentPassword: 'wrong-password-0' }), 'INVALID_CREDENTIALS', 401, 'wrong currentPassword');
  const password2 = 'second-password-2';
  t.equal((await mgmt.updateProfile({ password: password2, currentPassword: password1 })).id, profile.id, 'updateProfile: password changed');
  // A password change ends every other session: the SDK reports the server's code.
  await expectApiError(t, other.profile(), 'TOKEN_INVALID', 401, 'the other session after a password change');
  await expectApiError(t, new ManagementClient({ baseUrl: svc.controlUrl }).login({ email, password: password1 }), 'INVALID_CREDENTIALS', 401, 'login with the old password');
  const email2 = `ops2-${process.pid}-${Date.now()}@example.com`;
  t.equal((await mgmt.updateProfile({ email: email2, currentPassword: password2 })).email, email2, 'updateProfile: e-mail changed');
  const third = new ManagementClient({ baseUrl: svc.controlUrl });
  t.equal((await third.login({ email: email2, password: password2 })).email, email2, 'login with the new e-mail and password');

  // refresh: rotates the refresh token and keeps the new pair.
  const before = sent.length;
  t.equal(await mgmt.refresh(), undefined, 'refresh resolves');
  await mgmt.refresh();
  const refreshes = sent.slice(before).filter((s) => s.path === '/api/auth/refresh');
  t.equal(refreshes.length, 2, 'two refresh requests');
  t.same(refreshes[0]?.body, { refreshToken: reg.refreshToken }, 'the first refresh presented the register refresh token');
  const rotated = (refreshes[1]?.body as { refreshToken?: string } | undefined)?.refreshToken;
  t.ok(rotated && rotated !== reg.refreshToken && rotated.startsWith('rt_'), 'the second presented the rotated one');
  t.match(mgmt.accessToken, JWT, 'an access token after refresh');
  t.equal((await mgmt.profile()).id, profile.id, 'calls work after refresh');

  // Multi-factor sign-in: enrol, confirm, log in with a code, turn it off. The codes come from the
  // secret as an authenticator app would make them.
  t.same(await mgmt.mfaStatus(), { enabled: false, recoveryCodesLeft: 0 }, 'mfaStatus: off');
  const enrolment = await mgmt.enrolTotp();
  checkKeys(t, enrolment, ['secret', 'otpauthUri', 'qrSvg'], [], 'enrolTotp');
  const app = new TOTP({ secret: Secret.fromBase32(enrolment.secret) });
  const codeIn = (steps: number) => app.generate({ timestamp: Date.now() + steps * 30_000 });
  const recovery = await mgmt.confirmTotp(codeIn(-1));
  t.equal(recovery.length, 10, 'confirmTotp: ten recovery codes');
  t.match(await mgmt.mfaStatus(), { enabled: true, recoveryCodesLeft: 10 }, 'mfaStatus: on');
  const mfaLogin = new ManagementClient({ baseUrl: svc.controlUrl });
  const challenge = await mfaLogin.login({ email: email2, password: password2 });
  t.has(challenge, { mfaRequired: true, email: email2 }, 'login answers with a challenge');
  t.equal(mfaLogin.accessToken, undefined, 'and no session');
  await expectStateError(t, mfaLogin.profile(), /log in/, 'calls before the code');
  await expectApiError(t, mfaLogin.verifyMfa('000000' === codeIn(0) ? '111111' : '000000'), 'MFA_CODE_INVALID', 400, 'verifyMfa: a wrong code');
  const verified = await mfaLogin.verifyMfa(codeIn(0));
  t.has(verified, { mfaRequired: false, email: email2, expiresIn: 900 }, 'verifyMfa: the session');
  t.equal((await mfaLogin.profile()).id, profile.id, 'calls work after verifyMfa');
  await mgmt.disableTotp(password2, recovery[0]!);
  t.same(await mgmt.mfaStatus(), { enabled: false, recoveryCodesLeft: 0 }, 'disableTotp: off');
  t.has(await new ManagementClient({ baseUrl: svc.controlUrl }).login({ email: email2, password: password2 }), { mfaRequired: false }, 'login is one step again');

  // Applications.
  const created = await mgmt.createApplication('ops app');
  checkKeys(t, created, ['id', 'clientId', 'name', 'status', 'tier', 'clusterId', 'createdAt', 'updatedAt'], [], 'createApplication (create form)');
  t.has(created, { name: 'ops app', status: 'ACTIVE', tier: 'DEMO' }, 'createApplication: values');
  t.match(created.id, UUID, 'createApplication: id is a UUID');
  const detailKeys = ['id', 'clientId', 'name', 'status', 'tier', 'clusterId', 'createdAt', 'updatedAt', 'type', 'clusterEndpoint', 'clusterName', 'clusterStatus'];
  const listed = await mgmt.listApplications();
  t.equal(listed.length, 1, 'listApplications: the one application');
  checkKeys(t, listed[0]!, detailKeys, [], 'listApplications (detail form)');
  t.has(listed[0], created, 'listApplications: the created application');
  const detail = await mgmt.getApplication(created.id);
  checkKeys(t, detail, detailKeys, [], 'getApplication (detail form)');
  t.has(detail, { ...created, type: 'DEMO', clusterStatus: 'ACTIVE', clusterEndpoint: endpoint }, 'getApplication: values, clusterEndpoint');
  t.match(detail.clusterEndpoint, /^https?:\/\/[^/]+/, 'clusterEndpoint is a URL');
  const updated = await mgmt.updateApplication(created.id, 'ops app renamed');
  checkKeys(t, updated, detailKeys, [], 'updateApplication (detail form)');
  t.has(updated, { id: created.id, name: 'ops app renamed', clusterEndpoint: detail.clusterEndpoint }, 'updateApplication: renamed');
  t.equal((await mgmt.getApplication(created.id)).name, 'ops app renamed', 'getApplication reads the new name');

  // API keys.
  const keyFields = ['id', 'token', 'keyPrefix', 'keySuffix', 'audience', 'tier', 'createdAt'];
  const key1 = await mgmt.createApiKey(created.id);
  checkKeys(t, key1, keyFields, [], 'createApiKey');
  t.equal(key1.keyPrefix, key1.token.slice(0, 8), 'keyPrefix: the token’s first 8 characters');
  t.has(key1, { tier: 'DEMO', audience: detail.clusterName }, 'createApiKey: values');
  const keys1 = await mgmt.listApiKeys(created.id);
  t.equal(keys1.length, 1, 'listApiKeys: one key');
  checkKeys(t, keys1[0]!, ['id', 'keyPrefix', 'audience', 'tier', 'status', 'createdAt', 'lastUsedAt'], ['revokedAt', 'keySuffix'], 'listApiKeys');
  t.equal(keys1[0]!.lastUsedAt, null, 'listApiKeys: a key never used has lastUsedAt null');
  const usage = await mgmt.getUsage(created.id);
  checkKeys(t, usage, ['appId', 'registeredUsers', 'chats', 'messages', 'storedFileBytes', 'concurrentUsers', 'days', 'asOf'], [], 'getUsage');
  t.has(usage, { appId: created.id, registeredUsers: 0, chats: 0, messages: 0, storedFileBytes: 0, concurrentUsers: { current: 0, peak: 0 } }, 'getUsage: a new application has none');
  t.equal(usage.days.length, 30, 'getUsage: 30 days');
  t.has(keys1[0], { id: key1.id, keyPrefix: key1.keyPrefix, status: 'ACTIVE' }, 'listApiKeys: the key, active');
  t.notOk(JSON.stringify(keys1).includes(key1.token), 'listApiKeys never contains the token');

  const server1 = new ChatServer({ baseUrl: detail.clusterEndpoint!, apiKey: key1.token });
  t.same(await server1.whoAmI(), { appId: created.id, keyId: key1.id, cluster: detail.clusterName }, 'the cluster accepts the new key');

  const key2 = await mgmt.rotateApiKey(created.id, key1.id);
  checkKeys(t, key2, keyFields, [], 'rotateApiKey (same shape as create)');
  t.not(key2.id, key1.id, 'rotate: a new key id');
  t.not(key2.token, key1.token, 'rotate: a new token');
  const keys2 = await mgmt.listApiKeys(created.id);
  const old = keys2.find((k) => k.id === key1.id);
  t.has(old, { status: 'REVOKED' }, 'rotate revoked the old key');
  t.match(old?.revokedAt, ISO, 'with revokedAt');
  t.has(keys2.find((k) => k.id === key2.id), { status: 'ACTIVE' }, 'the new key is active');
  t.notOk(JSON.stringify(keys2).includes(key2.token), 'listApiKeys never contains the rotated token');
  await expectApiError(t, server1.whoAmI(), 'API_KEY_INVALID', 401, 'the old key after rotation');
  const server2 = new ChatServer({ baseUrl: detail.clusterEndpoint!, apiKey: key2.token });
  t.equal((await server2.whoAmI()).keyId, key2.id, 'the rotated key works');
  await expectApiError(t, mgmt.rotateApiKey(created.id, key1.id), 'KEY_REVOKED', 409, 'rotating a revoked key');

  t.equal(await mgmt.revokeApiKey(created.id, key2.id), undefined, 'revokeApiKey resolves');
  t.same((await mgmt.listApiKeys(created.id)).map((k) => k.status), ['REVOKED', 'REVOKED'], 'both keys revoked');
  await expectApiError(t, server2.whoAmI(), 'API_KEY_INVALID', 401, 'a revoked key');
  t.equal(await mgmt.revokeApiKey(created.id, key2.id), undefined, 'revokeApiKey is idempotent');

  const key3 = await mgmt.createApiKey(created.id);
  const server3 = new ChatServer({ baseUrl: detail.clusterEndpoint!, apiKey: key3.token });
  t.equal((await server3.whoAmI()).keyId, key3.id, 'a fresh key works before the application is deleted');
  // Webhook endpoints (delivery itself: test/control/webhooks.test.ts).
  const hook = await mgmt.createWebhook(created.id, { url: 'https://hooks.example.com/chat', events: ['message.new'], description: 'push' });
  checkKeys(t, hook, ['id', 'url', 'events', 'status', 'createdAt', 'updatedAt', 'secret', 'description'], [], 'createWebhook');
  t.match(hook.secret, /^whsec_/, 'createWebhook: the secret');
  t.same((await mgmt.listWebhooks(created.id)).map((w) => w.id), [hook.id], 'listWebhooks');
  t.equal((await mgmt.getWebhook(created.id, hook.id)).url, hook.url, 'getWebhook');
  t.match(await mgmt.updateWebhook(created.id, hook.id, { status: 'DISABLED', description: '' }), { status: 'DISABLED', disabledReason: 'disabled by the integrator' }, 'updateWebhook');
  t.equal(await mgmt.revealWebhookSecret(created.id, hook.id), hook.secret, 'revealWebhookSecret');
  t.not(await mgmt.rotateWebhookSecret(created.id, hook.id), hook.secret, 'rotateWebhookSecret');
  await expectApiError(t, mgmt.createWebhook(created.id, { url: 'http://hooks.example.com/', events: ['message.new'] }), 'VALIDATION_FAILED', 400, 'createWebhook: http://');
  t.equal(await mgmt.deleteWebhook(created.id, hook.id), undefined, 'deleteWebhook resolves');
  await expectApiError(t, mgmt.getWebhook(created.id, hook.id), 'WEBHOOK_NOT_FOUND', 404, 'getWebhook after delete');
  t.equal(await mgmt.deleteApplication(created.id), undefined, 'deleteApplication resolves');
  t.same(await mgmt.listApplications(), [], 'listApplications: gone');
  await expectApiError(t, mgmt.getApplication(created.id), 'APP_NOT_FOUND', 404, 'getApplication after delete');
  await expectApiError(t, server3.whoAmI(), 'API_KEY_INVALID', 401, 'a key of a deleted application');

  // logout: the session ends on the server and in the client.
  const lastToken = mgmt.accessToken!;
  t.equal(await mgmt.logout(), undefined, 'logout resolves');
  t.equal(mgmt.accessToken, undefined, 'no access token after logout');
  await expectStateError(t, async () => mgmt.profile(), /register or log in first/, 'profile after logout');
  await expectStateError(t, mgmt.refresh(), /register or log in first/, 'refresh after logout');
  const raw = await httpClient(svc.controlUrl).get('/api/client/profile', lastToken);
  t.equal(raw.status, 401, 'the logged-out access token is refused by the server');
  t.equal(raw.body?.code, 'TOKEN_INVALID', 'with TOKEN_INVALID');
  t.equal((await third.profile()).id, profile.id, 'another session of the account is unaffected');
});

t.test('ManagementClient methods report a missing session as a rejected promise', async (t) => {
  // `mgmt.profile().catch(handle)` must reach `handle`: no method may throw synchronously.
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  const sync: string[] = [];
  const calls: [string, () => Promise<unknown>][] = [
    ['profile', () => mgmt.profile()],
    ['updateProfile', () => mgmt.updateProfile({ companyName: 'x' })],
    ['createApplication', () => mgmt.createApplication('x')],
    ['getApplication', () => mgmt.getApplication(chatApp.id)],
    ['updateApplication', () => mgmt.updateApplication(chatApp.id, 'x')],
    ['createApiKey', () => mgmt.createApiKey(chatApp.id)],
    ['rotateApiKey', () => mgmt.rotateApiKey(chatApp.id, chatKey.id)],
    ['listApplications', () => mgmt.listApplications()],
    ['listApiKeys', () => mgmt.listApiKeys(chatApp.id)],
    ['revokeApiKey', () => mgmt.revokeApiKey(chatApp.id, chatKey.id)],
    ['deleteApplication', () => mgmt.deleteApplication(chatApp.id)],
  ];
  for (const [name, call] of calls) {
    try {
      await call().catch(() => undefined);
    } catch {
      sync.push(name);
    }
  }
  t.same(sync, [], `no method throws synchronously (these do: ${sync.join(', ')})`);
  t.ok(calls.length === 11, 'every session-bound method was tried');
});

// ---- ChatServer -----------------------------------------------------------------------------------

t.test('ChatServer: every method, and it refuses to run in a browser', async (t) => {
  t.equal(ServerStateError, ChatStateError, 'the entry points share their error classes');
  t.equal(ServerApiError, ChatApiError, 'ChatApiError too');

  const g = globalThis as { document?: unknown };
  const had = Object.prototype.hasOwnProperty.call(g, 'document');
  const previous = g.document;
  g.document = {};
  try {
    const error = await rejection(() => new ChatServer({ baseUrl: endpoint, apiKey: chatKey.token }));
    t.ok(error instanceof ChatStateError, 'with `document` defined: ChatStateError');
    t.match((error as Error).message, /must not run in a browser/, 'saying why');
    t.ok(new ChatClient({ baseUrl: endpoint }) instanceof ChatClient, 'while ChatClient, made for browsers, constructs');
  } finally {
    if (had) g.document = previous;
    else delete g.document;
  }
  t.equal(typeof g.document, 'undefined', 'document restored');
  await expectStateError(t, () => new ChatServer({ baseUrl: endpoint, apiKey: '' }), /apiKey is required/, 'empty apiKey');

  const who = await server.whoAmI();
  checkKeys(t, who, ['appId', 'keyId', 'cluster'], [], 'whoAmI');
  t.same(who, { appId: chatApp.id, keyId: chatKey.id, cluster: chatApp.clusterName }, 'whoAmI: this application and key');
  await expectApiError(t, new ChatServer({ baseUrl: endpoint, apiKey: 'not-a-key' }).whoAmI(), 'API_KEY_INVALID', 401, 'whoAmI with a bad key');

  const erin = await server.registerUser({ username: `erin-${process.pid}`, displayName: 'Erin E' });
  checkUser(t, erin, { username: `erin-${process.pid}`, displayName: 'Erin E' }, 'registerUser');
  t.equal(erin.createdAt, erin.updatedAt, 'registerUser: createdAt = updatedAt');
  const frank = await server.registerUser({ username: `frank-${process.pid}` });
  checkUser(t, frank, { username: `frank-${process.pid}`, displayName: `frank-${process.pid}` }, 'registerUser without displayName: defaults to the username');
  await expectApiError(t, server.registerUser({ username: `erin-${process.pid}` }), 'USERNAME_TAKEN', 409, 'registerUser twice');

  const byId = await server.signIn({ userId: erin.userId });
  checkSession(t, byId, erin.userId, 'signIn by userId');
  const byName = await server.signIn({ username: erin.username });
  checkSession(t, byName, erin.userId, 'signIn by username');
  t.not(byName.refreshToken, byId.refreshToken, 'each sign-in is its own session');
  await expectApiError(t, server.signIn({ username: 'nobody-here' }), 'USER_NOT_FOUND', 404, 'signIn of an unknown user');
  const user401 = await rejection(new ChatServer({ baseUrl: endpoint, apiKey: byId.jwt }).whoAmI());
  t.ok(user401 instanceof ChatApiError && user401.status === 401, 'a user JWT is refused where an API key is expected');

  t.same(await server.getUser(erin.userId), erin, 'getUser');
  const renamed = await server.updateUser(erin.userId, { displayName: 'Erin Renamed' });
  checkUser(t, renamed, { userId: erin.userId, username: erin.username, displayName: 'Erin Renamed', createdAt: erin.createdAt }, 'updateUser');
  t.ok(renamed.updatedAt >= erin.updatedAt, 'updateUser: updatedAt moved on');
  t.same(await server.getUser(erin.userId), renamed, 'getUser reads the update back');
  await expectApiError(t, server.updateUser('00000000-0000-4000-8000-000000000000', { displayName: 'x' }), 'USER_NOT_FOUND', 404, 'updateUser of an unknown user');
  await expectApiError(t, server.getUser('00000000-0000-4000-8000-000000000000'), 'USER_NOT_FOUND', 404, 'getUser of an unknown user');

  t.equal(await server.deleteUser(frank.userId), undefined, 'deleteUser resolves');
  await expectApiError(t, server.getUser(frank.userId), 'USER_NOT_FOUND', 404, 'getUser after delete');
  await expectApiError(t, server.signIn({ userId: frank.userId }), 'USER_NOT_FOUND', 404, 'signIn after delete');
  await expectApiError(t, server.deleteUser(frank.userId), 'USER_NOT_FOUND', 404, 'deleteUser twice');
});

// ---- ChatClient (JSON) ----------------------------------------------------------------------------

t.test('ChatClient: chats, members, messages, reactions, read marks, typing and history over REST and realtime', async (t) => {
  const [alice, bob, carol, dave] = [await newUser('alice', 'Alice'), await newUser('bob'), await newUser('carol'), await newUser('dave')];
  const A = await clientFor(t, alice);
  const B = await clientFor(t, bob);
  const C = await clientFor(t, carol);
  const Crest = await clientFor(t, carol); // never connected: everything over REST

  t.equal(A.userId, alice.userId, 'userId getter');
  t.equal(A.realtime.status, 'idle', 'idle before connect');
  t.same(await A.me(), alice, 'me: the signed-in user');
  t.same(await Crest.me(), carol, 'me for another user');

  const statuses: ConnectionStatus[] = [];
  A.on('status', (s) => statuses.push(s));
  await Promise.all([A.connect(), B.connect(), C.connect()]);
  t.same(statuses, ['connecting', 'open'], 'connect: connecting → open');
  t.equal(A.realtime.status, 'open', 'status getter: open');
  t.equal(await A.connect(), undefined, 'connect when open resolves at once');

  // createGroup
  const bobAdded = nextEvent(B, 'membership.changed', (e) => e.userId === bob.userId && e.change === 'added');
  const group = await A.createGroup('Team', [bob.userId, carol.userId]);
  checkSummary(t, group, { type: 'group', name: 'Team', createdBy: alice.userId, role: 'owner', lastSeq: 0, readSeq: 0, unreadCount: 0 }, 'createGroup');
  t.has(await bobAdded, { type: 'membership.changed', chatId: group.chatId, userId: bob.userId, change: 'added', role: 'member' }, 'bob is told he was added');
  const G = group.chatId;

  // getChat
  checkSummary(t, await A.getChat(G), { chatId: G, type: 'group', name: 'Team', role: 'owner' }, 'getChat (owner)');
  checkSummary(t, await B.getChat(G), { chatId: G, role: 'member' }, 'getChat (member)');

  // renameChat
  const updatedEvent = nextEvent(B, 'chat.updated', (e) => e.chatId === G);
  const renamed = await A.renameChat(G, 'Team renamed');
  checkSummary(t, renamed, { chatId: G, name: 'Team renamed', role: 'owner' }, 'renameChat');
  t.ok(renamed.updatedAt >= group.updatedAt, 'renameChat: updatedAt moved on');
  const updated = await updatedEvent;
  t.equal(updated.chat.name, 'Team renamed', 'chat.updated carries the new name');
  await expectApiError(t, B.renameChat(G, 'Not allowed'), 'NOT_ALLOWED', 403, 'a member renaming');

  // directChat
  const direct = await A.directChat(bob.userId);
  checkSummary(t, direct, { type: 'direct', createdBy: alice.userId, role: 'member' }, 'directChat');
  t.notOk('name' in direct, 'a direct chat has no name');
  t.equal((await B.directChat(alice.userId)).chatId, direct.chatId, 'directChat: the same chat from either side');

  // members
  const members = await A.members(G);
  t.same(members.map((m) => m.userId), [alice.userId, ...[bob.userId, carol.userId].sort()], 'members: joined together, so the owner first, then by id');
  members.forEach((m) => checkMember(t, m, { role: m.userId === alice.userId ? 'owner' : 'member', readSeq: 0 }, `members: ${m.userId === alice.userId ? 'owner' : 'member'}`));

  // addMembers
  const daveAdded = nextEvent(B, 'membership.changed', (e) => e.userId === dave.userId && e.change === 'added');
  const added = await A.addMembers(G, [dave.userId]);
  t.equal(added.length, 1, 'addMembers: one added');
  checkMember(t, added[0]!, { userId: dave.userId, role: 'member', readSeq: 0 }, 'addMembers');
  t.has(await daveAdded, { chatId: G, role: 'member' }, 'members are told');
  t.equal((await A.members(G)).length, 4, 'four members');
  await expectApiError(t, B.addMembers(G, [dave.userId]), 'NOT_ALLOWED', 403, 'a member adding');

  // setRole
  const roleEvent = nextEvent(C, 'membership.changed', (e) => e.userId === bob.userId && e.change === 'role');
  checkMember(t, await A.setRole(G, bob.userId, 'admin'), { userId: bob.userId, role: 'admin' }, 'setRole');
  t.has(await roleEvent, { chatId: G, role: 'admin' }, 'membership.changed (role)');
  await expectApiError(t, B.setRole(G, carol.userId, 'admin'), 'NOT_ALLOWED', 403, 'an admin setting roles');

  // removeMember
  const daveRemoved = nextEvent(B, 'membership.changed', (e) => e.userId === dave.userId && e.change === 'removed');
  t.equal(await A.removeMember(G, dave.userId), undefined, 'removeMember resolves');
  t.has(await daveRemoved, { chatId: G }, 'membership.changed (removed)');
  t.notOk((await A.members(G)).some((m) => m.userId === dave.userId), 'dave is no longer a member');

  // send (realtime)
  const m1New = nextEvent(B, 'message.new', (e) => e.chatId === G);
  const m1 = await A.send(G, 'hello team');
  checkMessage(t, m1, { chatId: G, senderId: alice.userId, content: 'hello team', seq: 1, edited: false, deleted: false, reactions: [] }, 'send');
  t.notOk('replyTo' in m1, 'no replyTo on a plain message');
  const m1Event = await m1New;
  t.equal(m1Event.seq, 1, 'message.new seq');
  t.same(m1Event.message, m1, 'message.new carries the acknowledged message');

  // send with replyTo
  const m2New = nextEvent(A, 'message.new', (e) => e.chatId === G && e.message.senderId === bob.userId);
  const m2 = await B.send(G, 'reply to you', { replyTo: m1.messageId, idempotencyKey: `reply-${process.pid}` });
  checkMessage(t, m2, { chatId: G, senderId: bob.userId, content: 'reply to you', seq: 2 }, 'send with replyTo');
  checkReply(t, m2.replyTo!, m1, 'replyTo');
  t.same((await m2New).message, m2, 'the reply reaches alice');
  t.same(await B.send(G, 'reply to you', { replyTo: m1.messageId, idempotencyKey: `reply-${process.pid}` }), m2, 'the same idempotency key returns the same message');

  // edit
  const editedEvent = nextEvent(B, 'message.edited', (e) => e.message.messageId === m1.messageId);
  const m1e = await A.edit(G, m1.messageId, 'hello team (edited)');
  checkMessage(t, m1e, { messageId: m1.messageId, seq: 1, content: 'hello team (edited)', edited: true, timeStamp: m1.timeStamp }, 'edit');
  t.ok(m1e.editedAt, 'edit: editedAt set');
  const edited = await editedEvent;
  t.equal(edited.seq, 1, 'message.edited seq');
  // The writer's answer names its own reactions; the event every member shares does not.
  const { ownReactions: editorsOwn, ...m1eShared } = m1e;
  t.same(editorsOwn, [], 'edit: the answer names the editor’s own reactions (none)');
  t.same(edited.message, m1eShared, 'message.edited carries the new state');

  // An action error over realtime: the SDK's error class with the server's code.
  const wsError = await expectApiError(t, B.edit(G, m1.messageId, 'hijacked'), 'NOT_ALLOWED', 0, 'editing another user’s message over realtime');
  t.equal(wsError?.problem.type, 'websocket', 'the problem says it came from an error frame');
  await expectApiError(t, Crest.edit(G, m1.messageId, 'hijacked'), 'NOT_ALLOWED', 403, 'the same over REST');
  await expectApiError(t, B.react(G, '00000000-0000-4000-8000-000000000000', 'x'), 'MESSAGE_NOT_FOUND', 0, 'reacting to no message over realtime');

  // react / unreact
  const reactionAdded = nextEvent(A, 'reaction.added', (e) => e.reaction.senderId === bob.userId);
  const reacted = await B.react(G, m1.messageId, '👍');
  checkMessage(t, reacted, { messageId: m1.messageId, content: 'hello team (edited)' }, 'react');
  t.equal(reacted.reactions.length, 1, 'react: one reaction');
  const thumbs = reacted.reactions[0]!;
  t.has(thumbs, { senderId: bob.userId, reaction: '👍' }, 'react: bob’s 👍');
  const addedEvent = await reactionAdded;
  t.equal(addedEvent.seq, m1.seq, 'reaction.added names the message’s seq');
  t.same(addedEvent.reaction, thumbs, 'reaction.added carries the reaction');
  t.same((await B.react(G, m1.messageId, '👍')).reactions, [thumbs], 'react is idempotent');
  const party = await A.react(G, m1.messageId, '🎉');
  t.same(party.reactions.map((r) => [r.senderId, r.reaction]), [[bob.userId, '👍'], [alice.userId, '🎉']], 'a second reaction');

  const reactionRemoved = nextEvent(A, 'reaction.removed', (e) => e.reaction.reactionId === thumbs.reactionId);
  const unreacted = await B.unreact(G, m1.messageId, '👍');
  checkMessage(t, unreacted, { messageId: m1.messageId }, 'unreact');
  t.same(unreacted.reactions.map((r) => r.reaction), ['🎉'], 'unreact: only alice’s 🎉 left');
  t.same((await reactionRemoved).reaction, thumbs, 'reaction.removed carries the removed reaction');
  t.same((await B.unreact(G, m1.messageId, '👍')).reactions.length, 1, 'unreact is idempotent');

  // reactions (the full list) and applyReaction (a summary kept current from events)
  t.same(party.reactionCounts, { '👍': 1, '🎉': 1 }, 'react: counts per value');
  t.same(party.ownReactions, ['🎉'], "react: the answer names alice's own values");
  t.same(unreacted.ownReactions, [], "unreact: bob holds none now");
  const listed = await A.reactions(G, m1.messageId, { limit: 1 });
  t.same(listed, { reactions: [party.reactions[1]] }, 'reactions: the one left, and no next page');
  const again = applyReaction(reacted, thumbs, false, bob.userId);
  t.same([again.reactionCounts, again.ownReactions, again.reactions], [{}, [], []], 'applyReaction: a removal takes the count, the latest and the own value');
  const back = applyReaction(again, thumbs, true, bob.userId);
  t.same([back.reactionCounts, back.ownReactions, back.reactions], [{ '👍': 1 }, ['👍'], [thumbs]], 'applyReaction: an addition puts them back');
  t.same(applyReaction(back, thumbs, true).ownReactions, ['👍'], "applyReaction: another's event leaves ownReactions alone");

  // markRead (realtime)
  const m3 = await A.send(G, 'third');
  const readEvent = nextEvent(A, 'read.updated', (e) => e.userId === bob.userId && e.chatId === G);
  t.equal(await B.markRead(G, m3.seq), m3.seq, 'markRead resolves with the stored read mark');
  t.has(await readEvent, { seq: m3.seq }, 'read.updated reaches the others');
  t.equal(await B.markRead(G, 1), m3.seq, 'the read mark only moves forward');
  t.has(await B.getChat(G), { readSeq: m3.seq, unreadCount: 0 }, 'getChat shows the read mark');

  // typing
  const typingStarted = nextEvent(A, 'typing.started', (e) => e.chatId === G);
  t.equal(await B.typing(G, true), undefined, 'typing(true) resolves once acknowledged');
  t.has(await typingStarted, { v: 1, type: 'typing.started', chatId: G, userId: bob.userId }, 'typing.started');
  const typingStopped = nextEvent(A, 'typing.stopped', (e) => e.chatId === G);
  t.equal(await B.typing(G, false), undefined, 'typing(false) resolves');
  t.has(await typingStopped, { chatId: G, userId: bob.userId }, 'typing.stopped');
  t.equal(await Crest.typing(G, true), undefined, 'typing while not connected is dropped quietly');

  // deleteMessage (realtime)
  const deletedEvent = nextEvent(B, 'message.deleted', (e) => e.message.messageId === m3.messageId);
  const tomb = await A.deleteMessage(G, m3.messageId);
  checkMessage(t, tomb, { messageId: m3.messageId, seq: m3.seq, content: '', deleted: true, reactions: [] }, 'deleteMessage (tombstone)');
  const { ownReactions: _tombOwn, ...tombShared } = tomb;
  t.same((await deletedEvent).message, tombShared, 'message.deleted carries the tombstone');
  await expectApiError(t, A.edit(G, m3.messageId, 'too late'), 'MESSAGE_DELETED', 0, 'editing a deleted message');

  // The same operations over REST (a client that never connected).
  const m4New = [nextEvent(A, 'message.new', (e) => e.chatId === G && e.message.senderId === carol.userId), nextEvent(B, 'message.new', (e) => e.chatId === G && e.message.senderId === carol.userId)];
  const m4 = await Crest.send(G, 'via REST');
  checkMessage(t, m4, { chatId: G, senderId: carol.userId, content: 'via REST', seq: 4 }, 'send over REST');
  for (const e of await Promise.all(m4New)) t.same(e.message, m4, 'a REST send is delivered over realtime');
  t.equal(A.realtime.seen(G), 4, 'realtime.seen: the last seq alice saw');
  t.equal(B.realtime.seen(G), 4, 'realtime.seen: the last seq bob saw');
  const m4e = await Crest.edit(G, m4.messageId, 'via REST (edited)');
  checkMessage(t, m4e, { messageId: m4.messageId, edited: true, content: 'via REST (edited)' }, 'edit over REST');
  const m4r = await Crest.react(G, m4.messageId, '✅');
  t.has(m4r.reactions[0], { senderId: carol.userId, reaction: '✅', messageId: m4.messageId }, 'react over REST');
  t.same((await Crest.unreact(G, m4.messageId, '✅')).reactions, [], 'unreact over REST');
  t.equal(await Crest.markRead(G, 2), 4, "markRead over REST answers the stored mark: carol's own message (seq 4), never moved back");
  const m5 = await Crest.send(G, 'to be deleted over REST');
  checkMessage(t, await Crest.deleteMessage(G, m5.messageId), { messageId: m5.messageId, deleted: true, content: '' }, 'deleteMessage over REST');

  // getMessages: newest first, spec §2.4 shape.
  const all = await A.getMessages(G);
  t.same(all.map((m) => m.seq), [5, 4, 3, 2, 1], 'getMessages: every message, newest first');
  all.forEach((m) => checkMessage(t, m, { chatId: G }, `getMessages seq ${m.seq}`));
  t.same(all.find((m) => m.seq === 1), { ...m1e, reactions: party.reactions.filter((r) => r.reaction === '🎉'), reactionCounts: { '🎉': 1 }, ownReactions: ['🎉'] }, 'history holds the edited message with its reactions');
  const reply = all.find((m) => m.seq === 2)!;
  checkReply(t, reply.replyTo!, m1e, 'replyTo in history (reflects the edit)');
  t.has(all.find((m) => m.seq === 3), { deleted: true, content: '' }, 'the tombstone keeps its seq');
  const page1 = await A.getMessages(G, { size: 2 });
  t.same(page1.map((m) => m.seq), [5, 4], 'getMessages size 2');
  const page2 = await A.getMessages(G, { size: 2, lastMessage: page1[1]!.messageId });
  t.same(page2.map((m) => m.seq), [3, 2], 'getMessages with the lastMessage cursor');

  // history(): pages until the first message.
  const pages: number[][] = [];
  for await (const page of A.history(G, 2)) pages.push(page.map((m) => m.seq));
  t.same(pages, [[5, 4], [3, 2], [1]], 'history pages newest first');

  // messagesBetween: oldest first.
  t.same((await A.messagesBetween(G, 2, 4)).map((m) => m.seq), [2, 3, 4], 'messagesBetween: the range, oldest first');
  t.same(await A.messagesBetween(G, 2, 2), [reply], 'messagesBetween a single seq');

  // listChats and chats()
  const first = await A.listChats({ size: 1 });
  t.equal(first.chats.length, 1, 'listChats size 1');
  t.equal(first.chats[0]?.chatId, G, 'most recent activity first: the group');
  checkSummary(t, first.chats[0]!, { type: 'group', lastSeq: 5 }, 'listChats entry');
  checkMessage(t, first.chats[0]!.lastMessage!, { seq: 5, deleted: true }, 'listChats lastMessage');
  t.type(first.nextCursor, 'string', 'a next cursor');
  const second = await A.listChats({ size: 1, cursor: first.nextCursor! });
  t.same(second.chats.map((c) => c.chatId), [direct.chatId], 'the second page: the direct chat');
  t.equal(second.nextCursor, undefined, 'no further page');
  const everything: string[] = [];
  for await (const c of A.chats(1)) everything.push(c.chatId);
  t.same(everything, [G, direct.chatId], 'chats() iterates every page');
  t.same((await A.listChats()).chats.map((c) => c.chatId), everything, 'listChats with defaults: both');

  // realtime.action and on/unsubscribe.
  t.same(await A.realtime.action({ type: 'ping' }), {}, 'realtime.action(ping) resolves with the ack result');
  let unsubscribedCalls = 0;
  const off = A.on('*', () => unsubscribedCalls++);
  t.type(off, 'function', 'on returns an unsubscribe function');
  off();
  const anyEvent = nextEvent(A, 'typing.started');
  await B.typing(G, true);
  await anyEvent;
  t.equal(unsubscribedCalls, 0, 'an unsubscribed handler gets nothing');

  // leave
  const carolLeft = nextEvent(A, 'membership.changed', (e) => e.userId === carol.userId && e.change === 'removed');
  t.equal(await C.leave(G), undefined, 'leave resolves');
  t.has(await carolLeft, { chatId: G }, 'the others are told');
  await expectApiError(t, C.getChat(G), 'CHAT_NOT_FOUND', 404, 'getChat after leaving');
  await expectApiError(t, C.leave(direct.chatId), 'CHAT_NOT_FOUND', 404, 'leaving a chat one is not in');

  // deleteChat
  await expectApiError(t, B.deleteChat(G), 'NOT_ALLOWED', 403, 'an admin deleting a group');
  const chatDeleted = nextEvent(B, 'chat.deleted', (e) => e.chatId === G);
  t.equal(await A.deleteChat(G), undefined, 'deleteChat resolves');
  t.has(await chatDeleted, { v: 1, type: 'chat.deleted', chatId: G }, 'chat.deleted');
  t.equal(B.realtime.seen(G), undefined, 'the client forgets a deleted chat’s seq');
  await expectApiError(t, A.getChat(G), 'CHAT_NOT_FOUND', 404, 'getChat after delete');
  await expectApiError(t, B.send(G, 'anyone?'), 'CHAT_NOT_FOUND', 0, 'sending to a deleted chat over realtime');
  const directDeleted = nextEvent(A, 'chat.deleted', (e) => e.chatId === direct.chatId);
  t.equal(await B.deleteChat(direct.chatId), undefined, 'either member deletes a direct chat');
  await directDeleted;
  t.same((await A.listChats()).chats, [], 'alice has no chats left');

  // close
  const closed = nextStatus(B, 'closed');
  const pending = B.realtime.action({ type: 'ping' });
  B.close();
  await closed;
  t.equal(B.realtime.status, 'closed', 'close: status closed');
  await expectStateError(t, pending, /closed/, 'an action pending at close');
  await expectStateError(t, B.realtime.action({ type: 'ping' }), /connect\(\) first/, 'an action after close');
  t.equal(await B.typing(direct.chatId, true), undefined, 'typing after close is dropped');

  const policy = exponentialBackoff(100, 1000, 0.5);
  const delays = [0, 1, 2, 10].map((n) => policy.delay(n));
  t.ok(delays[0]! >= 50 && delays[0]! <= 150 && delays[3]! >= 500 && delays[3]! <= 1500, `exponentialBackoff grows and is capped, with jitter (${delays.join(', ')})`);
});

// ---- ChatClient (MessagePack) ---------------------------------------------------------------------

t.test('a MessagePack client sends actions and receives events in binary frames', async (t) => {
  const sockets: { protocol: string }[] = [];
  const sentFrames: unknown[] = [];
  const receivedBinary: boolean[] = [];
  class RecordingWebSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols);
      sockets.push(this);
      this.on('message', (_data, isBinary) => receivedBinary.push(isBinary));
    }
    override send(data: any, ...rest: any[]): void {
      sentFrames.push(data);
      (super.send as (...args: unknown[]) => void)(data, ...rest);
    }
  }
  const [gina, hank] = [await newUser('gina'), await newUser('hank')];
  const P = await clientFor(t, gina, { encoding: 'msgpack', WebSocket: RecordingWebSocket as unknown as WebSocketConstructor });
  const H = await clientFor(t, hank);
  await Promise.all([P.connect(), H.connect()]);
  t.equal(sockets[0]?.protocol, 'msgpack', 'the server agreed to the msgpack subprotocol');

  const ginaAdded = nextEvent(P, 'membership.changed', (e) => e.userId === gina.userId);
  const chat = await H.directChat(gina.userId);
  t.has(await ginaAdded, { chatId: chat.chatId, change: 'added' }, 'membership.changed received over msgpack');

  // send
  const hankGets = nextEvent(H, 'message.new', (e) => e.message.senderId === gina.userId);
  const packed = await P.send(chat.chatId, 'packed hello ✓');
  checkMessage(t, packed, { chatId: chat.chatId, senderId: gina.userId, content: 'packed hello ✓', seq: 1 }, 'msgpack send ack');
  t.same((await hankGets).message, packed, 'the JSON client gets the msgpack client’s message');

  // receive a message
  const ginaGets = nextEvent(P, 'message.new', (e) => e.message.senderId === hank.userId);
  const plain = await H.send(chat.chatId, 'json hello', { replyTo: packed.messageId });
  const received = await ginaGets;
  checkMessage(t, received.message, { messageId: plain.messageId, content: 'json hello', seq: 2 }, 'message.new decoded from msgpack');
  t.same(received.message, plain, 'identical to what the JSON client got back');

  // react
  const reactionToHank = nextEvent(H, 'reaction.added', (e) => e.reaction.senderId === gina.userId);
  const reacted = await P.react(chat.chatId, plain.messageId, '🔥');
  t.has(reacted.reactions[0], { senderId: gina.userId, reaction: '🔥', messageId: plain.messageId }, 'msgpack react ack');
  t.same((await reactionToHank).reaction, reacted.reactions[0], 'reaction.added reaches the JSON client');
  const reactionToGina = nextEvent(P, 'reaction.added', (e) => e.reaction.senderId === hank.userId);
  await H.react(chat.chatId, packed.messageId, '👀');
  t.has((await reactionToGina).reaction, { reaction: '👀', messageId: packed.messageId }, 'reaction.added received over msgpack');

  // edit
  const editToHank = nextEvent(H, 'message.edited', (e) => e.message.messageId === packed.messageId);
  const edited = await P.edit(chat.chatId, packed.messageId, 'packed hello (edited)');
  checkMessage(t, edited, { messageId: packed.messageId, edited: true, content: 'packed hello (edited)' }, 'msgpack edit ack');
  const { ownReactions: _packedOwn, ...editedShared } = edited;
  t.same((await editToHank).message, editedShared, 'message.edited reaches the JSON client');
  const editToGina = nextEvent(P, 'message.edited', (e) => e.message.messageId === plain.messageId);
  const hankEdited = await H.edit(chat.chatId, plain.messageId, 'json hello (edited)');
  const { ownReactions: _hankOwn, ...hankShared } = hankEdited;
  t.same((await editToGina).message, hankShared, 'message.edited received over msgpack');

  // the other actions, and an error, over msgpack
  t.same((await P.unreact(chat.chatId, plain.messageId, '🔥')).reactions, [], 'msgpack unreact');
  t.equal(await P.markRead(chat.chatId, 2), 2, 'msgpack markRead');
  t.equal(await P.typing(chat.chatId, true), undefined, 'msgpack typing');
  await expectApiError(t, P.edit(chat.chatId, plain.messageId, 'not mine'), 'NOT_ALLOWED', 0, 'an error frame over msgpack');
  t.has(await P.deleteMessage(chat.chatId, packed.messageId), { deleted: true, content: '' }, 'msgpack deleteMessage');

  t.same(sentFrames.filter((f) => !(f instanceof Uint8Array)), [], 'every frame sent was binary');
  t.same(
    sentFrames.map((f) => (unpack(f as Uint8Array) as { type: string }).type),
    ['message.send', 'reaction.add', 'message.edit', 'reaction.remove', 'read.mark', 'typing.start', 'message.edit', 'message.delete'],
    'each action went out as one MessagePack frame',
  );
  t.ok(receivedBinary.length > 0 && receivedBinary.every(Boolean), `every received frame was binary (${receivedBinary.length})`);
});

// ---- action timeout -------------------------------------------------------------------------------

t.test('an action with no answer rejects with ChatTimeoutError after actionTimeoutMs', async (t) => {
  // The server always answers, so the client's frames are dropped on the way out: to the client
  // this is exactly a server that never acks.
  let dropping = false;
  const dropped: string[] = [];
  class DroppingWebSocket extends WebSocket {
    override send(data: any, ...rest: any[]): void {
      if (dropping) {
        dropped.push(String(data));
        return;
      }
      (super.send as (...args: unknown[]) => void)(data, ...rest);
    }
  }
  const [ivan, judy] = [await newUser('ivan'), await newUser('judy')];
  const I = await clientFor(t, ivan, { actionTimeoutMs: 300, WebSocket: DroppingWebSocket as unknown as WebSocketConstructor });
  await I.connect();
  const chat = await I.directChat(judy.userId);

  dropping = true;
  const started = Date.now();
  const error = await rejection(I.send(chat.chatId, 'lost in transit', { idempotencyKey: 'retry-me' }));
  const elapsed = Date.now() - started;
  t.ok(error instanceof ChatTimeoutError, `ChatTimeoutError (${error instanceof Error ? error.message : String(error)})`);
  t.match((error as Error).message, /message\.send got no answer in 300 ms/, 'naming the action and the timeout');
  t.ok(elapsed >= 290 && elapsed < 3000, `after about actionTimeoutMs (${elapsed} ms)`);
  t.equal(dropped.length, 1, 'the frame was sent (and dropped)');
  const ping = await rejection(I.realtime.action({ type: 'ping' }));
  t.ok(ping instanceof ChatTimeoutError, 'realtime.action times out too');
  t.equal(I.realtime.status, 'open', 'a timeout does not close the connection');

  dropping = false;
  const retried = await I.send(chat.chatId, 'lost in transit', { idempotencyKey: 'retry-me' });
  t.equal(retried.content, 'lost in transit', 'the retry with the same idempotency key succeeds');
  t.same((await I.getMessages(chat.chatId)).map((m) => m.messageId), [retried.messageId], 'exactly one message exists');
});

// ---- onSignedOut ----------------------------------------------------------------------------------

t.test('onSignedOut: when the sign-in can no longer be refreshed', async (t) => {
  // (a) The user is deleted. Its JWT stays valid until it expires, so the client learns from the
  // REST answers and the realtime close; onSignedOut fires at the next refresh.
  const kim = await newUser('kim');
  const signedOutA: unknown[] = [];
  const K = await clientFor(t, kim, { onSignedOut: (e) => signedOutA.push(e) });
  // refreshMarginSeconds above the JWT lifetime: every call refreshes first, as one near expiry does.
  const tokensK2: UserSession[] = [];
  const signedOutK2: unknown[] = [];
  const K2 = await clientFor(t, kim, { refreshMarginSeconds: 3600, onTokens: (s) => tokensK2.push(s), onSignedOut: (e) => signedOutK2.push(e) });
  t.same(await K2.me(), kim, 'a client refreshing before each call works');
  t.equal(tokensK2.length, 1, 'and was handed the new pair');
  checkSession(t, tokensK2[0]!, kim.userId, 'onTokens');
  await K.connect();
  const closed = nextStatus(K, 'closed');
  await server.deleteUser(kim.userId);
  await closed;
  t.equal(K.realtime.status, 'closed', 'the deleted user’s realtime connection ends for good (4500)');
  await expectApiError(t, K.me(), 'USER_NOT_FOUND', 404, 'me after deletion, JWT still valid');
  t.same(signedOutA, [], 'no refresh happened yet, so onSignedOut has not fired');
  const refused = await expectApiError(t, K2.me(), 'REFRESH_TOKEN_INVALID', 401, 'a call needing a refresh after deletion');
  t.equal(signedOutK2.length, 1, 'onSignedOut fired once');
  t.equal(signedOutK2[0], refused, 'with the refresh error');
  t.equal(K2.userId, undefined, 'the client dropped the session');
  await expectStateError(t, K2.me(), /setAuth/, 'a call after sign-out');

  // (b) The refresh token is reused: the whole sign-in is revoked, both holders are signed out.
  const lee = await newUser('lee');
  const session = await server.signIn({ userId: lee.userId });
  const outL1: unknown[] = [];
  const outL2: unknown[] = [];
  const L1 = new ChatClient({ baseUrl: endpoint, refreshMarginSeconds: 3600, onSignedOut: (e) => outL1.push(e) });
  const L2 = new ChatClient({ baseUrl: endpoint, refreshMarginSeconds: 3600, onSignedOut: (e) => outL2.push(e) });
  L1.setAuth(session);
  L2.setAuth(session);
  t.same(await L1.me(), lee, 'the first holder refreshes (rotating the refresh token)');
  const reused = await expectApiError(t, L2.me(), 'REFRESH_TOKEN_REUSED', 401, 'the second holder presents the spent refresh token');
  t.same(outL2, [reused], 'onSignedOut: REFRESH_TOKEN_REUSED');
  await expectApiError(t, L1.me(), 'REFRESH_TOKEN_INVALID', 401, 'the first holder’s rotated token died with the sign-in');
  t.equal(outL1.length, 1, 'onSignedOut fired for the first holder too');
  t.equal((outL1[0] as ChatApiError).code, 'REFRESH_TOKEN_INVALID', 'with REFRESH_TOKEN_INVALID');
});

// ---- known SDK bugs (continued) ------------------------------------------------------------------

t.test('connect() without a session rejects instead of retrying forever', async (t) => {
  // Realtime.open() catches auth.token()'s ChatStateError ("call setAuth … first", also what a
  // signed-out client throws) and calls retry(): status stays `reconnecting` and connect() never
  // settles. Only a ChatApiError 401 ends it. The guard below bounds the wait.
  const c = new ChatClient({ baseUrl: endpoint, WebSocket: WS });
  t.teardown(() => c.close());
  const outcome = await Promise.race([
    c.connect().then(
      () => 'resolved',
      (error: unknown) => error,
    ),
    new Promise((resolve) => setTimeout(() => resolve(`still pending after 1 s, status ${c.realtime.status}`), 1_000)),
  ]);
  t.ok(outcome instanceof ChatStateError, `connect() rejects with ChatStateError (got: ${outcome instanceof Error ? outcome.message : String(outcome)})`);
});

t.test('an oversized realtime action fails with the server’s code, not a timeout', async (t) => {
  // REST refuses the same body at once (413 PAYLOAD_TOO_LARGE). Over realtime the server cannot
  // name the action in its FRAME_TOO_LARGE error (it cannot read the frame), so the SDK refuses the
  // frame itself rather than letting the caller wait for a timeout.
  const [mia, ned] = [await newUser('mia'), await newUser('ned')];
  const c = await clientFor(t, mia, { actionTimeoutMs: 1_000 });
  const chat = await c.directChat(ned.userId);
  await expectApiError(t, c.send(chat.chatId, 'x'.repeat(70_000)), 'PAYLOAD_TOO_LARGE', 413, 'over REST');
  await c.connect();
  const error = await rejection(c.send(chat.chatId, 'x'.repeat(70_000)));
  t.ok(error instanceof ChatApiError, `over realtime: ChatApiError (got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`);
  t.equal((error as { code?: string }).code, 'FRAME_TOO_LARGE', 'with the server’s code');
});
