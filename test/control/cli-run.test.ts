import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseCommand, runCommand, type Io } from '../../control/cli/index.ts';
import { LmdbControlStore, type ApiKeyRecord, type Application, type ControlStore } from '../../control/store/index.ts';
import { at, NOW } from '../helpers/fixed-clock.ts';

// The operator commands run in process against an embedded store of their own: what each prints and
// which exit status it gives. cli-clusters.test.ts runs the real command on a started service.

async function freshStore(t: Test): Promise<ControlStore> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-run-'));
  const store = LmdbControlStore.open(dir);
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });
  return store;
}

/** Runs `npm run ctl -- argv` at `now` against `store`; what it printed and its exit status. */
async function ctl(store: ControlStore, argv: string[], now = NOW) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (text) => out.push(text), err: (text) => err.push(text) };
  const command = parseCommand(argv);
  if (command.type === 'help') throw new Error('help is not run against a store');
  const code = await runCommand(command, store, io, now);
  return { code, stdout: out.join(''), stderr: err.join('') };
}

const lines = (text: string) => text.trimEnd().split('\n');
const jsonLines = (text: string) => lines(text).filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

function application(clusterId: string, overrides: Partial<Application> = {}): Application {
  return { id: randomUUID(), clientId: randomUUID(), name: 'App', status: 'ACTIVE', type: 'DEMO', tier: 'DEMO', clusterId, createdAt: NOW, updatedAt: NOW, ...overrides };
}

function apiKey(appId: string, audience: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const id = randomUUID();
  return { id, appId, tokenHash: randomUUID(), keyPrefix: `ey${id.slice(0, 6)}`, audience, tier: 'DEMO', createdAt: NOW, ...overrides };
}

t.test('cluster register and cluster list', async (t) => {
  const store = await freshStore(t);
  const demo = await store.clusters.upsert('demo', 'http://127.0.0.1:8081', NOW);
  await store.applications.create(application(demo.id), 5);
  await store.applications.create(application(demo.id), 5);

  const created = await ctl(store, ['cluster', 'register', 'eu-1', 'https://eu-1.chat.example/']);
  t.equal(created.code, 0);
  const eu1 = await store.clusters.getByName('eu-1');
  t.match(eu1, { name: 'eu-1', endpoint: 'https://eu-1.chat.example', status: 'ACTIVE', createdAt: NOW }, 'stored, ACTIVE, without the trailing slash');
  t.equal(created.stdout, `cluster eu-1 registered: id ${eu1!.id}, endpoint https://eu-1.chat.example, status ACTIVE\n`);

  const drained = await ctl(store, ['cluster', 'register', 'eu-1', 'https://eu-1.chat.example', '--status', 'DRAINING'], at(60));
  t.equal(drained.stdout, `cluster eu-1 updated: id ${eu1!.id}, endpoint https://eu-1.chat.example, status DRAINING\n`, 'a known name is updated');
  const moved = await ctl(store, ['cluster', 'register', 'eu-1', 'https://eu-1b.chat.example'], at(120));
  t.match(moved.stdout, /endpoint https:\/\/eu-1b\.chat\.example, status DRAINING\n$/, 'without --status the status is kept');
  t.same(await store.clusters.get(eu1!.id), { ...eu1, endpoint: 'https://eu-1b.chat.example', status: 'DRAINING' }, 'same id and createdAt');

  const table = await ctl(store, ['cluster', 'list']);
  t.equal(table.code, 0);
  t.same(lines(table.stdout), [
    'NAME  ID                                    ENDPOINT                    STATUS    APPS',
    `demo  ${demo.id}  http://127.0.0.1:8081       ACTIVE    2`,
    `eu-1  ${eu1!.id}  https://eu-1b.chat.example  DRAINING  0`,
  ]);
  const json = await ctl(store, ['cluster', 'list', '--json']);
  t.same(jsonLines(json.stdout), [
    { name: 'demo', id: demo.id, endpoint: 'http://127.0.0.1:8081', status: 'ACTIVE', applications: 2 },
    { name: 'eu-1', id: eu1!.id, endpoint: 'https://eu-1b.chat.example', status: 'DRAINING', applications: 0 },
  ]);
});

t.test('app list: every application, or those of one cluster', async (t) => {
  const store = await freshStore(t);
  const demo = await store.clusters.upsert('demo', 'http://127.0.0.1:8081', NOW);
  const eu1 = await store.clusters.upsert('eu-1', 'https://eu-1.chat.example', NOW);
  const second = application(eu1.id, { name: 'Second app', createdAt: at(20), tier: 'STANDARD', type: 'STANDARD' });
  const first = application(demo.id, { name: 'First', createdAt: at(10), status: 'SUSPENDED' });
  const lost = application(randomUUID(), { name: 'Lost', createdAt: at(30) });
  for (const app of [second, first, lost]) await store.applications.create(app, 5);

  const table = await ctl(store, ['app', 'list']);
  t.equal(table.code, 0);
  t.same(lines(table.stdout), [
    `ID${' '.repeat(36)}ACCOUNT${' '.repeat(31)}STATUS     TIER      CLUSTER${' '.repeat(46)}NAME`,
    `${first.id}  ${first.clientId}  SUSPENDED  DEMO      demo${' '.repeat(49)}First`,
    `${second.id}  ${second.clientId}  ACTIVE     STANDARD  eu-1${' '.repeat(49)}Second app`,
    `${lost.id}  ${lost.clientId}  ACTIVE     DEMO      (unregistered ${lost.clusterId})  Lost`,
  ], 'oldest first; the name last, so spaces in it keep the columns');
  t.same(jsonLines((await ctl(store, ['app', 'list', '--json'])).stdout), [
    { ...first, clusterName: 'demo' },
    { ...second, clusterName: 'eu-1' },
    { ...lost, clusterName: null },
  ]);
  t.same(jsonLines((await ctl(store, ['app', 'list', '--cluster', 'eu-1', '--json'])).stdout), [{ ...second, clusterName: 'eu-1' }]);
  const empty = await store.clusters.upsert('empty', 'http://127.0.0.1:9', NOW);
  t.same(lines((await ctl(store, ['app', 'list', '--cluster', empty.name])).stdout), [`ID  ACCOUNT  STATUS  TIER  CLUSTER  NAME`], 'a cluster without applications: the header');
  const unknown = await ctl(store, ['app', 'list', '--cluster', 'nowhere']);
  t.same(unknown, { code: 1, stdout: '', stderr: 'cluster nowhere not found (see cluster list)\n' });
});

t.test('app move: tier and cluster, onto ACTIVE clusters only, naming the keys to rotate', async (t) => {
  const store = await freshStore(t);
  const demo = await store.clusters.upsert('demo', 'http://127.0.0.1:8081', NOW);
  const eu1 = await store.clusters.upsert('eu-1', 'https://eu-1.chat.example', NOW);
  const eu2 = await store.clusters.upsert('eu-2', 'https://eu-2.chat.example', NOW, 'DRAINING');
  const eu3 = await store.clusters.upsert('eu-3', 'https://eu-3.chat.example', NOW, 'OFFLINE');
  const app = application(demo.id);
  await store.applications.create(app, 5);
  const oldKey = apiKey(app.id, 'demo');
  const revoked = apiKey(app.id, 'demo', { createdAt: at(1) });
  const other = apiKey(app.id, 'eu-1', { createdAt: at(2) });
  for (const k of [oldKey, revoked, other]) await store.keys.create(k, 5);
  await store.keys.revoke(app.id, revoked.id, at(3));

  for (const target of [eu2, eu3]) {
    const refused = await ctl(store, ['app', 'move', app.id, '--tier', 'STANDARD', '--cluster', target.name], at(10));
    t.same(refused, { code: 1, stdout: '', stderr: `cluster ${target.name} is ${target.status}: no application may be moved onto it\n` }, `onto ${target.status}: refused`);
  }
  t.same(await ctl(store, ['app', 'move', app.id, '--cluster', 'nowhere']), { code: 1, stdout: '', stderr: 'cluster nowhere not found; register it first: cluster register nowhere <endpoint>\n' });
  const ghost = randomUUID();
  t.same(await ctl(store, ['app', 'move', ghost, '--tier', 'STANDARD']), { code: 1, stdout: '', stderr: `application ${ghost} not found\n` });
  t.same(await store.applications.getById(app.id), app, 'nothing refused changed the application');

  const moved = await ctl(store, ['app', 'move', app.id, '--tier', 'STANDARD', '--cluster', 'eu-1'], at(20));
  t.equal(moved.code, 0);
  t.same(await store.applications.getById(app.id), { ...app, tier: 'STANDARD', type: 'STANDARD', clusterId: eu1.id, updatedAt: at(20) }, 'tier, type and cluster set');
  t.same(lines(moved.stdout), [
    `application ${app.id} is now STANDARD on cluster eu-1 (https://eu-1.chat.example)`,
    `1 active API key(s) were made for another cluster and are refused by the nodes of eu-1; rotate each (POST /api/client/apps/${app.id}/keys/<keyId>/rotate) and hand the new token to the integrator:`,
    'KEY                                   PREFIX    AUDIENCE',
    `${oldKey.id}  ${oldKey.keyPrefix}  demo`,
  ], 'only the active key made for another cluster is listed');

  // Its own cluster drains: the application stays, its tier may change, and naming it is no move.
  await store.clusters.upsert('eu-1', eu1.endpoint, at(30), 'DRAINING');
  const tier = await ctl(store, ['app', 'tier', app.id, 'DEMO'], at(40));
  t.equal(tier.code, 0);
  t.equal(lines(tier.stdout)[0], `application ${app.id} is now DEMO on cluster eu-1 (https://eu-1.chat.example)`);
  t.equal((await ctl(store, ['app', 'move', app.id, '--cluster', 'eu-1'], at(50))).code, 0, 'naming its own cluster');
  t.match(await store.applications.getById(app.id), { tier: 'DEMO', type: 'DEMO', clusterId: eu1.id, updatedAt: at(50) });

  const back = await ctl(store, ['app', 'move', app.id, '--cluster', 'demo'], at(60));
  t.same(lines(back.stdout).slice(-2), ['KEY                                   PREFIX    AUDIENCE', `${other.id}  ${other.keyPrefix}  eu-1`], 'moving back lists the keys made for eu-1');
});

t.test('app show, suspend and reactivate', async (t) => {
  const store = await freshStore(t);
  const app = application(randomUUID());
  await store.applications.create(app, 5);
  t.same(JSON.parse((await ctl(store, ['app', 'show', app.id])).stdout), app);
  t.same(await ctl(store, ['app', 'suspend', app.id], at(10)), { code: 0, stdout: `application ${app.id} is now SUSPENDED\n`, stderr: '' });
  t.same(await store.applications.getById(app.id), { ...app, status: 'SUSPENDED', updatedAt: at(10) });
  t.equal((await ctl(store, ['app', 'reactivate', app.id], at(20))).code, 0);
  t.equal((await store.applications.getById(app.id))?.status, 'ACTIVE');
  const ghost = randomUUID();
  t.same(await ctl(store, ['app', 'show', ghost]), { code: 1, stdout: '', stderr: `application ${ghost} not found\n` });
  t.equal((await ctl(store, ['app', 'suspend', ghost])).code, 1);
});
