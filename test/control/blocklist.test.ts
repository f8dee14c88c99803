import t from 'tap';
import { ChatApiError, ManagementClient } from 'chat-service/management';
import { integration, newAccount, startService } from '../helpers/index.ts';

// README, "Moderation": the dashboard's way to an application's blocklist, through the
// management interface: the same list the backend sets with its API key, applied at once.
const svc = await startService();
t.teardown(() => svc.stop());

t.test('the account sets its application’s blocklist; the node applies it at once and records who set it', async (t) => {
  const it = await integration(svc, 'mgmt-blocklist');
  const [ann, ben] = [await it.user('ann'), await it.user('ben')];
  const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: ben.userId }, ann.jwt)).body.chatId as string;
  const path = `/api/client/apps/${it.appId}/blocklist`;
  t.same((await it.control.get(path, it.accessToken)).body, { entries: [] }, 'empty until set');
  const set = await it.control.put(path, { entries: [{ text: 'scam', action: 'block' }, { text: 'darn', action: 'mask' }] }, it.accessToken);
  t.equal(set.status, 200);
  t.match(set.body, { entries: [{ text: 'scam', action: 'block' }, { text: 'darn', action: 'mask' }], updatedAt: String });
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'a SCAM offer' }, ann.jwt)).body.code, 'CONTENT_BLOCKED', 'the node refuses at once');
  t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'oh darn' }, ann.jwt)).body.message.content, 'oh ****', 'and masks');
  t.same((await it.node.get('/api/moderation/blocklist', it.apiKey)).body, set.body, 'the backend reads the same list');
  const [logged] = (await it.node.get('/api/moderation/actions?size=1', it.apiKey)).body.actions;
  t.match(logged, { action: 'blocklist.updated', by: /^account:/, reason: '2 entries' }, 'recorded as the account');

  const bad = await it.control.put(path, { entries: [{ text: 'fine', action: 'block' }, { text: '\u0301', action: 'block' }] }, it.accessToken);
  t.equal(bad.status, 400);
  t.same(bad.body.errors, [{ path: '/body/entries/1/text', message: 'has no letter, digit or symbol left once diacritics are set aside' }], 'names the entry');
  t.equal((await it.control.put(path, { entries: [{ text: 'x', action: 'hide' }] }, it.accessToken)).status, 400, 'an unknown action');
  t.equal((await it.control.get(path)).status, 401, 'an account token is required');
  const other = await integration(svc, 'mgmt-blocklist-other');
  t.equal((await it.control.get(`/api/client/apps/${other.appId}/blocklist`, it.accessToken)).body.code, 'APP_NOT_FOUND', 'not another account’s application');
});

t.test('ManagementClient: getBlocklist and setBlocklist', async (t) => {
  const mgmt = new ManagementClient({ baseUrl: svc.controlUrl });
  await mgmt.register(newAccount('sdk-blocklist'));
  const app = await mgmt.createApplication('SDK blocklist');
  t.match(await mgmt.setBlocklist(app.id, [{ text: 'spam', action: 'mask' }]), { entries: [{ text: 'spam', action: 'mask' }], updatedAt: String });
  t.match(await mgmt.getBlocklist(app.id), { entries: [{ text: 'spam', action: 'mask' }] });
  const refused = await mgmt.setBlocklist(app.id, [{ text: '', action: 'block' }]).catch((e: unknown) => e);
  t.ok(refused instanceof ChatApiError && refused.code === 'VALIDATION_FAILED', 'an empty entry: VALIDATION_FAILED');
});
