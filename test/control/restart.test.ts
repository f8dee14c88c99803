import t from 'tap';
import { client, newAccount, removeDir, startService, type Running } from '../helpers/index.ts';
import { assertProblem } from '../helpers/problem.ts';

/**
 * Everything the management interface hands out survives a restart on the same data directory:
 * accounts, sessions, the signing key (so earlier access tokens and API keys stay valid) and key
 * revocations. Run once with a graceful stop and once with kill -9.
 */
for (const how of ['stop', 'kill'] as const) {
  t.test(`state survives a restart after ${how === 'stop' ? 'a graceful stop' : 'kill -9'}`, async (t) => {
    const running: Running[] = [];
    const first = await startService();
    running.push(first);
    t.teardown(async () => {
      for (const svc of running) await svc.stop();
      removeDir(first.dataDir);
    });

    const api = client(first.controlUrl);
    const account = newAccount('restart');
    const reg = await api.post('/api/auth/register', account);
    t.equal(reg.status, 201, 'registered');
    const accessToken: string = reg.body.accessToken;
    const profileBefore = await api.get('/api/client/profile', accessToken);
    t.equal(profileBefore.status, 200);
    const app = await api.post('/api/client/apps', { name: 'Survivor' }, accessToken);
    t.equal(app.status, 201, 'app created');
    const kept = await api.post(`/api/client/apps/${app.body.id}/keys`, undefined, accessToken);
    const revoked = await api.post(`/api/client/apps/${app.body.id}/keys`, undefined, accessToken);
    t.equal(kept.status, 201, 'key 1 created');
    t.equal(revoked.status, 201, 'key 2 created');
    t.equal((await api.del(`/api/client/apps/${app.body.id}/keys/${revoked.body.id}`, accessToken)).status, 204, 'key 2 revoked');

    // Before the restart: the node accepts the kept key and refuses the revoked one.
    const node = client(first.nodeUrl);
    const whoBefore = await node.get('/api/server/whoami', kept.body.token);
    t.equal(whoBefore.status, 200, 'kept key verifies before the restart');
    assertProblem(t, await node.get('/api/server/whoami', revoked.body.token), 401, 'API_KEY_INVALID', 'revoked key before the restart');

    if (how === 'stop') await first.stop();
    else await first.kill();

    const second = await startService({}, first.dataDir);
    running.push(second);
    const api2 = client(second.controlUrl);
    const node2 = client(second.nodeUrl);

    const login = await api2.post('/api/auth/login', { email: account.email, password: account.password });
    t.equal(login.status, 200, 'the account still logs in');
    const profile = await api2.get('/api/client/profile', accessToken);
    t.equal(profile.status, 200, 'the old access token still works (signing key persisted)');
    t.same(profile.body, profileBefore.body, 'the profile is unchanged');

    const refreshed = await api2.call('POST', '/api/auth/refresh', { token: accessToken, body: { refreshToken: reg.body.refreshToken } });
    t.equal(refreshed.status, 200, 'the old refresh token still works (session persisted)');
    t.equal((await api2.get('/api/client/profile', refreshed.body.accessToken)).status, 200, 'the refreshed access token works');

    const detail = await api2.get(`/api/client/apps/${app.body.id}`, accessToken);
    t.equal(detail.status, 200, 'the application is still there');
    t.equal(detail.body.name, 'Survivor');
    t.equal(detail.body.clusterEndpoint, second.nodeUrl, 'the cluster endpoint follows the restarted node');
    const keys = await api2.get(`/api/client/apps/${app.body.id}/keys`, accessToken);
    t.equal(keys.status, 200);
    const status = (id: string) => keys.body.keys.find((k: { id: string }) => k.id === id)?.status;
    t.equal(status(kept.body.id), 'ACTIVE', 'kept key listed as active');
    t.equal(status(revoked.body.id), 'REVOKED', 'revoked key listed as revoked');

    const who = await node2.get('/api/server/whoami', kept.body.token);
    t.equal(who.status, 200, 'the kept key still verifies at the node');
    t.same(who.body, whoBefore.body, 'same application and key');
    assertProblem(t, await node2.get('/api/server/whoami', revoked.body.token), 401, 'API_KEY_INVALID', 'the revoked key is still refused');

    // The restarted service keeps issuing keys with the same signing key.
    const fresh = await api2.post(`/api/client/apps/${app.body.id}/keys`, undefined, accessToken);
    t.equal(fresh.status, 201);
    t.equal((await node2.get('/api/server/whoami', fresh.body.token)).status, 200, 'a key created after the restart verifies');
  });
}
