import t from 'tap';
import { generateSigningKey, KeyRing, MemorySigningKeys, type SigningKey } from '../../common/jwt/index.ts';
import { clusterSecret, NodeUnreachableError, RpcServer } from '../../node/cluster/index.ts';
import { addressOf, caller, failure, serve, silent } from '../helpers/rpc.ts';

// The cluster key is derived from the node signing key: rotating that key must not split a running
// cluster. Clock injected: a first key, rotated at 10 s to a key that signs from 30 s; the first
// retires at 90 s.

const BASE = Date.now();
const at = (seconds: number) => BASE + seconds * 1000;

/** What a node's cluster key is made of (as node/service.ts does): the live keys, the signing one first. */
const secretsOf = (ring: KeyRing) => () => ring.live().map((k: SigningKey) => clusterSecret(k.privateKeyPem));

t.test('during a rotation nodes on the old and on the new key accept each other; after retirement the old key opens no connection', async (t) => {
  const store = new MemorySigningKeys();
  const first = await store.ensure(generateSigningKey(new Date(at(0))));
  await store.rotate(generateSigningKey(new Date(at(10)), new Date(at(30))), new Date(at(90)).toISOString());
  const keys = await store.list();
  let now = at(20);
  const ring = () => new KeyRing(keys, () => now);

  const server = await serve(secretsOf(ring()), { echo: async (_a, _c, args) => args[0] });
  // A node that has not loaded the rotation yet proves with the first key's secret only.
  const lagging = caller(clusterSecret(first.privateKeyPem), {}, 'lagging');
  const before = caller(secretsOf(ring()), {}, 'before');
  t.teardown(async () => {
    await Promise.all([lagging.close(), before.close()]);
    await server.close();
  });
  t.equal(await before.call(addressOf(server), 'echo', 'a', 'c', [1]), 1, 'before activation: a node with both keys is accepted');
  t.equal(await lagging.call(addressOf(server), 'echo', 'a', 'c', [2]), 2, 'a node without the new key is accepted');
  // Until activation a node that has loaded the new key still proves with the old one, so a server
  // that has not loaded it yet accepts it: why a new key signs only after every node has loaded it.
  const oldServer = await serve(clusterSecret(first.privateKeyPem), { echo: async (_a, _c, args) => args[0] });
  t.teardown(() => oldServer.close());
  t.equal(await before.call(addressOf(oldServer), 'echo', 'a', 'c', [5]), 5, 'a server without the new key accepts a node that has it, before activation');

  now = at(40);
  const after = caller(secretsOf(ring()), {}, 'after');
  const laggingLate = caller(clusterSecret(first.privateKeyPem), {}, 'lagging-late');
  t.teardown(() => Promise.all([after.close(), laggingLate.close()]));
  t.equal(await after.call(addressOf(server), 'echo', 'a', 'c', [3]), 3, 'after activation: a node proving with the new key is accepted');
  t.equal(await laggingLate.call(addressOf(server), 'echo', 'a', 'c', [4]), 4, 'a node still on the old key is accepted until it retires');


  now = at(95);
  const stale = caller(clusterSecret(first.privateKeyPem), {}, 'stale');
  const fresh = caller(secretsOf(ring()), {}, 'fresh');
  t.teardown(() => Promise.all([stale.close(), fresh.close()]));
  t.ok((await failure(stale.call(addressOf(server), 'echo', 'a', 'c', [6]))) instanceof NodeUnreachableError, 'after retirement the old key opens no new connection');
  t.equal(await fresh.call(addressOf(server), 'echo', 'a', 'c', [7]), 7, 'the new key does');
  t.equal(await laggingLate.call(addressOf(server), 'echo', 'a', 'c', [8]), 8, 'a connection authenticated before the retirement stays open');
});

t.test('the node-to-node listener does not share its port: a second one on it fails with PORT_IN_USE', async (t) => {
  const first = await serve(Buffer.alloc(32, 1), {});
  t.teardown(() => first.close());
  const second = await failure(RpcServer.listen('127.0.0.1', first.port, { nodeId: 'second', secret: Buffer.alloc(32, 2), handlers: {}, log: silent, retryBindForMs: 300 }));
  t.match(second, { name: 'ListenError', code: 'PORT_IN_USE', port: first.port }, 'refused');
  t.match((second as Error).message, new RegExp(`port ${first.port} on 127\\.0\\.0\\.1 is in use`));
});
