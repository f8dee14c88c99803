import t from 'tap';
import { client, newAccount, startService } from '../helpers/index.ts';

t.test('setup sequence of spec §1.6 works end to end', async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const api = client(svc.controlUrl);
  const reg = await api.post('/api/auth/register', newAccount());
  t.equal(reg.status, 201);
  const app = await api.post('/api/client/apps', { name: 'App' }, reg.body.accessToken);
  t.equal(app.status, 201);
  const key = await api.post(`/api/client/apps/${app.body.id}/keys`, undefined, reg.body.accessToken);
  t.equal(key.status, 201);
  const detail = await api.get(`/api/client/apps/${app.body.id}`, reg.body.accessToken);
  t.equal(detail.body.clusterEndpoint, svc.nodeUrl);
  const who = await client(svc.nodeUrl).get('/api/server/whoami', key.body.token);
  t.equal(who.status, 200);
  t.equal(who.body.appId, app.body.id);
});
