import { connect, createServer, type Socket } from 'node:net';
import t from 'tap';
import { encodeFrame, newNonce, NodeUnreachableError, RPC_PROTOCOL_VERSION } from '../../node/cluster/index.ts';
import { addressOf, caller, failure, newSecret, RawPeer, serve } from '../helpers/rpc.ts';

// Node-to-node connections: who may connect, and what closes a connection.

t.test('the handshake succeeds between nodes holding the same key, and calls run', async (t) => {
  const secret = newSecret();
  const server = await serve(secret, { echo: async (appId, chatId, args) => ({ appId, chatId, args }) });
  const client = caller(secret);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const when = new Date('2024-05-01T12:00:00Z');
  const result = await client.call(addressOf(server), 'echo', 'app', 'chat', [{ a: 1 }, undefined, 'x', when]);
  t.same(result, { appId: 'app', chatId: 'chat', args: [{ a: 1 }, undefined, 'x', when] }, 'arguments arrive as passed: undefined and Dates survive');
  t.equal(((result as { args: unknown[] }).args[3] as Date).getTime(), when.getTime());
  const raw = await RawPeer.connect(server.port);
  t.teardown(() => raw.close());
  t.equal((await raw.handshake(secret))?.type, 'welcome', 'a peer holding the key is welcomed');
});

t.test('a wrong key is refused both ways: nothing runs, the caller gets NodeUnreachableError', async (t) => {
  let ran = 0;
  const secret = newSecret();
  const server = await serve(secret, { echo: async () => ++ran });
  const outsider = caller(newSecret());
  const member = caller(secret);
  t.teardown(async () => {
    await Promise.all([outsider.close(), member.close()]);
    await server.close();
  });
  t.ok((await failure(outsider.call(addressOf(server), 'echo', 'a', 'c', []))) instanceof NodeUnreachableError, 'a caller with another key gets NodeUnreachableError');
  t.equal(ran, 0, 'its call did not run');
  const raw = await RawPeer.connect(server.port);
  t.equal(await raw.handshake(newSecret()), undefined, 'no welcome for a wrong proof');
  await raw.closed;
  t.pass('the server closed the connection');

  // A fake server without the key: it says hello, then welcomes anyone with a made-up proof.
  const fake = createServer(impostor);
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => fake.close(resolve)));
  const fakePort = (fake.address() as { port: number }).port;
  t.ok((await failure(member.call(`127.0.0.1:${fakePort}`, 'echo', 'a', 'c', []))) instanceof NodeUnreachableError, 'the caller refuses a server that cannot prove the key');
  t.equal(await member.call(addressOf(server), 'echo', 'a', 'c', []), 1, 'the real server still serves');
});

/** A server that answers the handshake without the key: hello, then a welcome with a made-up proof. */
function impostor(socket: Socket): void {
  socket.on('error', () => {});
  socket.write(encodeFrame({ type: 'hello', v: RPC_PROTOCOL_VERSION, nodeId: 'impostor', nonce: newNonce() }));
  socket.once('data', () => socket.write(encodeFrame({ type: 'welcome', proof: newNonce() })));
}

t.test('replaying a recorded client handshake on a new connection is refused', async (t) => {
  let ran = 0;
  const secret = newSecret();
  const server = await serve(secret, { echo: async () => ++ran });
  // A recording proxy between a real caller and the server keeps what the caller sent.
  const recorded: Buffer[] = [];
  const proxied = new Set<Socket>();
  const proxy = createServer((inbound) => {
    const outbound = connect({ host: '127.0.0.1', port: server.port });
    for (const s of [inbound, outbound]) {
      proxied.add(s);
      s.on('error', () => {});
      s.on('close', () => proxied.delete(s));
    }
    inbound.on('data', (chunk: Buffer) => {
      recorded.push(Buffer.from(chunk));
      outbound.write(chunk);
    });
    outbound.pipe(inbound);
    inbound.on('close', () => outbound.destroy());
    outbound.on('close', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const client = caller(secret);
  t.teardown(async () => {
    await client.close();
    for (const s of proxied) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await server.close();
  });
  t.equal(await client.call(`127.0.0.1:${(proxy.address() as { port: number }).port}`, 'echo', 'a', 'c', []), 1, 'the recorded call ran once');

  // The attacker replays everything the caller sent (its auth, then its call) on a new connection.
  const replay = await RawPeer.connect(server.port);
  replay.socket.write(Buffer.concat(recorded));
  await replay.closed;
  t.same(replay.received.map((m) => m?.type), ['hello'], 'the server said hello (a fresh nonce) and closed: no welcome, no answer');
  t.equal(ran, 1, 'the replayed call did not run');
});

t.test('nothing but a handshake is accepted first; a silent connection is closed after the handshake time', async (t) => {
  let ran = 0;
  const secret = newSecret();
  const server = await serve(secret, { echo: async () => ++ran }, { handshakeMs: 200 });
  t.teardown(() => server.close());
  const eager = await RawPeer.connect(server.port);
  eager.send({ type: 'call', id: 1, op: 'echo', appId: 'a', chatId: 'c', args: [], budgetMs: 1000 });
  await eager.closed;
  t.same(eager.received.map((m) => m?.type), ['hello'], 'a call before the handshake closes the connection unanswered');
  const garbage = await RawPeer.connect(server.port);
  garbage.socket.write(Buffer.from([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]));
  await garbage.closed;
  t.pass('bytes that are no message close it too');
  const silent = await RawPeer.connect(server.port);
  await silent.closed;
  t.same(silent.received.map((m) => m?.type), ['hello'], 'a peer that never answers the hello is closed');
  t.equal(ran, 0);
});

t.test('an oversized frame closes that connection; the server stays up for others', async (t) => {
  const secret = newSecret();
  const server = await serve(secret, { echo: async (_a, _c, args) => args[0] });
  const client = caller(secret);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const before = await RawPeer.connect(server.port);
  await before.message(0);
  before.socket.write(Buffer.from([0x00, 0x20, 0x00, 0x00])); // announces 2 MiB before authenticating
  await before.closed;
  t.pass('an oversized frame before the handshake closes the connection');

  const peer = await RawPeer.connect(server.port);
  t.equal((await peer.handshake(secret))?.type, 'welcome');
  peer.send({ type: 'call', id: 7, op: 'echo', appId: 'a', chatId: 'c', args: ['fine'], budgetMs: 5000 });
  t.same(await peer.message(2), { type: 'ok', id: 7, value: 'fine' }, 'an authenticated raw peer is answered');
  const huge = Buffer.alloc(4 + (1 << 20) + 1);
  huge.writeUInt32BE((1 << 20) + 1, 0);
  peer.socket.write(huge);
  await peer.closed;
  t.pass('a frame one byte over 1 MiB from an authenticated peer closes its connection');
  t.equal(await client.call(addressOf(server), 'echo', 'a', 'c', ['still here']), 'still here', 'other connections are served');
});

t.test('unknown messages after the handshake are ignored, and the connection keeps serving', async (t) => {
  const secret = newSecret();
  const server = await serve(secret, { echo: async (_a, _c, args) => args[0] });
  t.teardown(() => server.close());
  const peer = await RawPeer.connect(server.port);
  t.teardown(() => peer.close());
  await peer.handshake(secret);
  peer.socket.write(Buffer.from([0, 0, 0, 1, 0xc1])); // not MessagePack
  peer.send({ type: 'welcome', proof: Buffer.alloc(32) }); // a known type the server never takes after the handshake
  peer.send({ type: 'call', id: 1, op: 'nope', appId: 'a', chatId: 'c', args: [], budgetMs: 1000 });
  peer.send({ type: 'call', id: 2, op: 'echo', appId: 'a', chatId: 'c', args: [2], budgetMs: 1000 });
  t.same(await peer.message(2), { type: 'failed', id: 1, reason: 'internal' }, 'an unknown operation is answered as a failure');
  t.same(await peer.message(3), { type: 'ok', id: 2, value: 2 });
});
