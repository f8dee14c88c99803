import t from 'tap';
import { ctl as run, jsonLines } from '../helpers/ctl.ts';
import { client, integration, removeDir, startService, type Running } from '../helpers/index.ts';

// README, "Clusters": the operator's commands run as the operator runs them, the real command line
// on a started service's store, and their effect seen through the management API and the node.
// What each command prints in every case is tested in process by cli-run.test.ts, and every rule of
// the command line by cli-parse.test.ts.
const running: Running[] = [];
const svc = await startService();
running.push(svc);
t.teardown(async () => {
  for (const s of running) await s.stop();
  removeDir(svc.dataDir);
});
const ctl = (...args: string[]) => run(svc.dataDir, ...args);

const audienceOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { aud: unknown }).aud;

t.test('a second cluster is registered and listed; an application moves to it with a new tier, and new keys follow', async (t) => {
  const app = await integration(svc, 'cli-move');
  const { control, node, accessToken, appId } = app;
  const [oldKey] = (await control.get(`/api/client/apps/${appId}/keys`, accessToken)).body.keys as { id: string; keyPrefix: string; audience: string }[];
  t.equal(oldKey?.audience, 'demo', 'the key was made for the demo cluster');

  const registered = await ctl('cluster', 'register', 'eu-1', 'https://eu-1.chat.example');
  t.equal(registered.code, 0, registered.stderr);
  t.match(registered.stdout, /^cluster eu-1 registered: id [0-9a-f-]{36}, endpoint https:\/\/eu-1\.chat\.example, status ACTIVE\n$/);
  const listed = jsonLines((await ctl('cluster', 'list', '--json')).stdout);
  t.equal(listed.length, 2, 'both clusters');
  t.match(listed, [
    { name: 'demo', id: String, endpoint: svc.nodeUrl, status: 'ACTIVE', applications: 1 },
    { name: 'eu-1', id: String, endpoint: 'https://eu-1.chat.example', status: 'ACTIVE', applications: 0 },
  ], 'by name: the demo cluster the service registered, with its application, and eu-1');
  const eu1 = listed[1]!;

  const moved = await ctl('app', 'move', appId, '--tier', 'STANDARD', '--cluster', 'eu-1');
  t.equal(moved.code, 0, moved.stderr);
  t.match(moved.stdout, `application ${appId} is now STANDARD on cluster eu-1 (https://eu-1.chat.example)\n`);
  t.match(moved.stdout, new RegExp(`\\n${oldKey!.id}\\s+${oldKey!.keyPrefix}\\s+demo\\n`), 'it names the key to rotate by id and prefix');

  const detail = await control.get(`/api/client/apps/${appId}`, accessToken);
  t.equal(detail.status, 200);
  t.match(
    detail.body,
    { tier: 'STANDARD', type: 'STANDARD', clusterId: eu1.id, clusterName: 'eu-1', clusterEndpoint: 'https://eu-1.chat.example', clusterStatus: 'ACTIVE' },
    'the detail form shows the new tier and cluster',
  );
  t.same(jsonLines((await ctl('app', 'list', '--cluster', 'eu-1', '--json')).stdout).map((a) => [a.id, a.tier, a.clusterName]), [[appId, 'STANDARD', 'eu-1']], 'app list --cluster eu-1');

  // Keys made now are for eu-1: the demo node (serving cluster demo) refuses them, and still
  // accepts the old key, made for it, until it is rotated.
  const created = await control.post(`/api/client/apps/${appId}/keys`, undefined, accessToken);
  t.equal(created.status, 201);
  t.equal(created.body.audience, 'eu-1', 'a key created after the move is for the new cluster');
  t.equal(audienceOf(created.body.token), 'eu-1', 'its aud claim too');
  t.equal((await node.get('/api/server/whoami', created.body.token)).status, 401, 'the demo node refuses a key for eu-1');
  t.equal((await node.get('/api/server/whoami', app.apiKey)).status, 200, 'and accepts the old key');
  const rotated = await control.post(`/api/client/apps/${appId}/keys/${oldKey!.id}/rotate`, undefined, accessToken);
  t.equal(rotated.status, 201);
  t.equal(rotated.body.audience, 'eu-1', 'a rotated key is for the new cluster');
  t.equal(audienceOf(rotated.body.token), 'eu-1');
});

t.test('nothing is moved onto a DRAINING cluster', async (t) => {
  const { control, accessToken, appId } = await integration(svc, 'cli-drain');
  const draining = await ctl('cluster', 'register', 'eu-2', 'http://127.0.0.1:9', '--status', 'DRAINING');
  t.equal(draining.code, 0, draining.stderr);
  t.match(draining.stdout, /^cluster eu-2 registered: .* status DRAINING\n$/);
  const refused = await ctl('app', 'move', appId, '--tier', 'STANDARD', '--cluster', 'eu-2');
  t.equal(refused.code, 1, 'exit 1');
  t.equal(refused.stderr, 'cluster eu-2 is DRAINING: no application may be moved onto it\n');
  t.match((await control.get(`/api/client/apps/${appId}`, accessToken)).body, { tier: 'DEMO', clusterName: 'demo', clusterStatus: 'ACTIVE' }, 'the application is unchanged');
});

t.test('bad arguments exit 2 with the usage', async (t) => {
  const { appId } = await integration(svc, 'cli-usage');
  const cases: [string, string[]][] = [
    ['app move without --tier or --cluster', ['app', 'move', appId]],
    ['an endpoint that is no http(s) URL', ['cluster', 'register', 'eu-9', 'ftp://127.0.0.1']],
    ['an unknown status', ['cluster', 'register', 'eu-9', 'http://127.0.0.1:9', '--status', 'SLEEPING']],
  ];
  const runs = await Promise.all(cases.map(([, args]) => ctl(...args)));
  for (const [i, [what]] of cases.entries()) {
    t.equal(runs[i]!.code, 2, `${what}: exit 2`);
    t.match(runs[i]!.stderr, /Usage: npm run ctl/, `${what}: the usage is shown`);
  }
});

t.test("the service's start does not undo a status the operator set on its cluster", async (t) => {
  const { appId, accessToken } = await integration(svc, 'cli-restart');
  t.equal((await ctl('cluster', 'register', 'demo', svc.nodeUrl, '--status', 'OFFLINE')).code, 0);
  await svc.stop();
  running.splice(running.indexOf(svc), 1);
  const restarted = await startService({}, svc.dataDir);
  running.push(restarted);
  const clusters = jsonLines((await ctl('cluster', 'list', '--json')).stdout);
  t.match(clusters.find((c) => c.name === 'demo'), { status: 'OFFLINE', endpoint: restarted.nodeUrl }, 'the endpoint follows the configuration, the status stays');
  t.notOk(clusters.some((c) => c.name === 'eu-9'), 'no refused command registered anything');
  const detail = await client(restarted.controlUrl).get(`/api/client/apps/${appId}`, accessToken);
  t.match(detail.body, { clusterName: 'demo', clusterStatus: 'OFFLINE' }, 'the detail form shows it');
});
