import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { redisOptions } from '../../bin/cluster.ts';
import { loadConfig } from '../../common/config/index.ts';
import { RedisBus } from '../../node/bus/index.ts';
import { freePort } from '../helpers/index.ts';
import { controlCrosses, recordingLog } from './bus-helpers.ts';

// README, Security: a node reaches Redis over TLS with a rediss:// REDIS_URL, its certificate
// checked against REDIS_TLS_CA_FILE (a private CA); a Redis whose certificate does not chain to
// the CA given is refused. A Redis of its own, listening only on TLS, with a CA made here.
const dir = mkdtempSync(join(tmpdir(), 'redis-tls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'));
openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('redis.key'), '-out', file('redis.csr'));
writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
openssl('x509', '-req', '-in', file('redis.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', file('san.ext'), '-out', file('redis.pem'));
openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=other CA', '-keyout', file('other.key'), '-out', file('other.pem'));

const port = await freePort();
const server = spawn('redis-server', ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--tls-cert-file', file('redis.pem'), '--tls-key-file', file('redis.key'), '--tls-ca-cert-file', file('ca.pem'), '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
t.teardown(() => void server.kill());
await new Promise((resolve) => setTimeout(resolve, 500));
const url = `rediss://127.0.0.1:${port}`;
const config = (ca: string) => loadConfig({ BUS: 'redis', STORE: 'cassandra', REDIS_URL: url, REDIS_TLS_CA_FILE: ca });

t.test('buses connect over TLS to a Redis whose certificate the CA file vouches for', async (t) => {
  const redis = redisOptions(config(file('ca.pem')));
  const [a, b] = await Promise.all([0, 1].map((i) => RedisBus.connect({ url, redis, nodeId: `n${i}`, prefix: 'tls-test:', log: recordingLog() })));
  t.teardown(() => Promise.all([a!.close(), b!.close()]));
  t.ok(await controlCrosses(a!, b!, 'over tls'), 'published on one bus, received on the other');
});

t.test("a Redis whose certificate another CA signed is refused", async (t) => {
  await t.rejects(RedisBus.connect({ url, redis: redisOptions(config(file('other.pem'))), nodeId: 'x', prefix: 'tls-test:', log: recordingLog() }), 'connect rejects');
});

t.test('a CA file without a rediss:// URL, or one that does not exist, stops the start with a reason', async (t) => {
  t.throws(() => redisOptions(loadConfig({ BUS: 'redis', STORE: 'cassandra', REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_TLS_CA_FILE: file('ca.pem') })), /not rediss:\/\//);
  t.throws(() => redisOptions(config(file('missing.pem'))), /missing\.pem/);
});
