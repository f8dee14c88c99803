import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import t from 'tap';
import { ApiError, BackendUnavailableError, OverloadedError } from '../../common/index.ts';
import { NodeUnreachableError } from '../../node/cluster/index.ts';
import { addressOf, caller, closedPort, failure, gate, newSecret, RawPeer, serve } from '../helpers/rpc.ts';

// Node-to-node calls: results, outcomes, deadlines and bounds.

t.test('2,000 concurrent calls share one connection and each gets its own result', async (t) => {
  const secret = newSecret();
  const server = await serve(secret, {
    double: async (appId, chatId, args) => {
      await new Promise((resolve) => setImmediate(resolve)); // answers come back interleaved
      return { appId, chatId, n: (args[0] as number) * 2 };
    },
  });
  const client = caller(secret);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const results = await Promise.all(Array.from({ length: 2000 }, (_, i) => client.call(addressOf(server), 'double', `app-${i}`, `chat-${i}`, [i])));
  t.ok(
    results.every((r, i) => JSON.stringify(r) === JSON.stringify({ appId: `app-${i}`, chatId: `chat-${i}`, n: i * 2 })),
    'every call got the answer to its own arguments',
  );
  t.equal(server.stats().connections, 1, 'over one connection');
});

t.test('outcomes travel as the owner produced them', async (t) => {
  const secret = newSecret();
  const big = 'x'.repeat(1500 * 1024); // over one frame: travels in parts
  const server = await serve(secret, {
    refuse: async () => new ApiError('RATE_LIMITED', 'slow down', { retryAfterSeconds: 3 }),
    invalid: async () => new ApiError('VALIDATION_FAILED', 'bad', { errors: [{ path: '/body/x', message: 'no' }] }),
    down: async () => {
      throw new BackendUnavailableError('cassandra');
    },
    bug: async () => {
      throw new TypeError('a bug');
    },
    big: async () => ({ big }),
    nothing: async () => undefined,
  });
  const client = caller(secret);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  const at = addressOf(server);
  const refused = await client.call(at, 'refuse', 'a', 'c', []);
  t.ok(refused instanceof ApiError, 'an ApiError comes back as an ApiError (a value, not a rejection)');
  t.match(refused, { code: 'RATE_LIMITED', detail: 'slow down', status: 429, extra: { retryAfterSeconds: 3 } });
  t.match(await client.call(at, 'invalid', 'a', 'c', []), { code: 'VALIDATION_FAILED', extra: { errors: [{ path: '/body/x', message: 'no' }] } }, 'with its field errors');
  const down = await failure(client.call(at, 'down', 'a', 'c', []));
  t.ok(down instanceof BackendUnavailableError && !(down instanceof OverloadedError), 'a backend outage on the owner is BackendUnavailableError here');
  const bug = await failure(client.call(at, 'bug', 'a', 'c', []));
  t.ok(bug instanceof Error && !(bug instanceof BackendUnavailableError) && !(bug instanceof NodeUnreachableError), 'anything else is a plain Error');
  t.match((bug as Error).message, /internal error/);
  t.same(await client.call(at, 'big', 'a', 'c', []), { big }, 'a 1.5 MB result arrives whole, in parts');
  t.equal(await client.call(at, 'nothing', 'a', 'c', []), undefined);
  t.equal(server.stats().connections, 1, 'none of this closed the connection');
});

t.test('a call past its deadline rejects with BackendUnavailableError; one whose budget is spent does not run', async (t) => {
  const secret = newSecret();
  const hang = gate();
  const server = await serve(secret, { hang: hang.handler });
  const client = caller(secret);
  t.teardown(async () => {
    hang.open();
    await client.close();
    await server.close();
  });
  const at = addressOf(server);
  const started = Date.now();
  const late = await failure(client.call(at, 'hang', 'a', 'c', [1], { timeoutMs: 150 }));
  t.ok(late instanceof BackendUnavailableError, 'outcome unknown: BackendUnavailableError');
  t.ok(Date.now() - started < 2_000, 'by the caller\'s own timer');
  t.equal(hang.entered, 1);
  // A budget already spent when sent: the callee skips it.
  const peer = await RawPeer.connect(server.port);
  t.teardown(() => peer.close());
  await peer.handshake(secret);
  peer.send({ type: 'call', id: 1, op: 'hang', appId: 'a', chatId: 'c', args: [], budgetMs: 0 });
  t.same(await peer.message(2), { type: 'failed', id: 1, reason: 'expired' }, 'answered expired');
  t.equal(hang.entered, 1, 'and not run');
});

t.test('the owner dying mid-call rejects every call in flight with BackendUnavailableError', async (t) => {
  const secret = newSecret();
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('../helpers/rpc-server-child.ts', import.meta.url).pathname], {
    env: { ...process.env, RPC_SECRET: secret.toString('hex') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.teardown(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const lines = createInterface({ input: child.stdout! });
  const line = (test: (l: { port?: number; entered?: number }) => boolean) =>
    new Promise<{ port?: number; entered?: number }>((resolve) => {
      const on = (l: string) => {
        const parsed = JSON.parse(l) as { port?: number; entered?: number };
        if (!test(parsed)) return;
        lines.off('line', on);
        resolve(parsed);
      };
      lines.on('line', on);
    });
  const { port } = await line((l) => l.port !== undefined);
  const client = caller(secret);
  t.teardown(() => client.close());
  const at = `127.0.0.1:${port}`;
  t.same(await client.call(at, 'echo', 'a', 'c', [1]), [1]);
  const entered = line((l) => l.entered === 5);
  const inFlight = Array.from({ length: 5 }, () => failure(client.call(at, 'hang', 'a', 'c', [])));
  await entered;
  child.kill('SIGKILL');
  const outcomes = await Promise.all(inFlight);
  t.ok(outcomes.every((e) => e instanceof BackendUnavailableError), 'all 5 rejected with BackendUnavailableError (they may have run)');
  t.ok(
    (await failure(client.call(at, 'echo', 'a', 'c', []))) instanceof NodeUnreachableError,
    'the next call dials again, finds nothing, and gets NodeUnreachableError (nothing ran)',
  );
});

t.test('connecting to a closed port rejects with NodeUnreachableError', async (t) => {
  const client = caller(newSecret());
  t.teardown(() => client.close());
  const port = await closedPort();
  const error = await failure(client.call(`127.0.0.1:${port}`, 'echo', 'a', 'c', []));
  t.ok(error instanceof NodeUnreachableError, 'nothing ran: NodeUnreachableError');
  t.match((error as Error).cause, { code: 'ECONNREFUSED' });
  t.ok((await failure(client.call('not an address', 'echo', 'a', 'c', []))) instanceof NodeUnreachableError, 'an address that is not host:port too');
});

t.test('in-flight bounds: the caller refuses at once without sending, the callee refuses unrun', async (t) => {
  const secret = newSecret();
  const hang = gate();
  const server = await serve(secret, { hang: hang.handler }, { maxInFlight: 5 });
  const client = caller(secret, { maxInFlight: 8 });
  t.teardown(async () => {
    hang.open();
    await client.close();
    await server.close();
  });
  const at = addressOf(server);
  const first = Array.from({ length: 8 }, (_, i) => client.call(at, 'hang', 'a', 'c', [i]));
  await hang.reached(5);
  const started = Date.now();
  const refused = await failure(client.call(at, 'hang', 'a', 'c', [99]));
  t.ok(refused instanceof OverloadedError && refused instanceof BackendUnavailableError, 'the 9th call is refused by the caller: OverloadedError');
  t.ok(Date.now() - started < 100, 'at once');
  t.equal((refused as OverloadedError).retryAfterSeconds, 1, 'with a retry hint');
  t.match((refused as Error).message, /overloaded/);
  const settled = await Promise.all(first.slice(5).map(failure));
  t.ok(settled.every((e) => e instanceof OverloadedError), 'calls 6 to 8 were refused by the callee, overloaded');
  t.equal(hang.entered, 5, 'and did not run there');
  hang.open();
  t.same(await Promise.all(first.slice(0, 5)), [0, 1, 2, 3, 4], 'the five running calls finish');
  t.equal(await client.call(at, 'hang', 'a', 'c', ['after']), 'after', 'below the bound again, calls run');
});

t.test('shutdown: the callee finishes running calls and refuses new ones unrun; the caller settles what waits', async (t) => {
  const secret = newSecret();
  const hang = gate();
  const server = await serve(secret, { hang: hang.handler });
  const client = caller(secret);
  const at = addressOf(server);
  const running = client.call(at, 'hang', 'a', 'c', ['finished']);
  await hang.reached(1);
  const closing = server.close(5_000);
  const refused = await failure(client.call(at, 'hang', 'a', 'c', ['late']));
  t.ok(refused instanceof NodeUnreachableError, 'a call to a leaving node does not run: NodeUnreachableError, try the new owner');
  hang.open();
  t.equal(await running, 'finished', 'the call that was running finishes and is answered');
  await closing;
  t.equal(hang.entered, 1);

  const other = gate();
  const second = await serve(secret, { hang: other.handler });
  t.teardown(() => second.close());
  const waiting = failure(client.call(addressOf(second), 'hang', 'a', 'c', []));
  await other.reached(1);
  await client.close();
  t.ok((await waiting) instanceof BackendUnavailableError, "closing the caller settles its calls in flight");
  t.ok((await failure(client.call(addressOf(second), 'hang', 'a', 'c', []))) instanceof BackendUnavailableError, 'and refuses new ones');
  other.open();
});

t.test('a caller that does not read its answers stops getting its calls read until it does', async (t) => {
  const secret = newSecret();
  const answer = 'y'.repeat(900 * 1024);
  let ran = 0;
  const waiters = new Map<number, () => void>();
  const server = await serve(
    secret,
    {
      big: async () => {
        ran++;
        waiters.get(ran)?.();
        return answer;
      },
    },
    { maxUnwrittenBytes: 1 << 20 },
  );
  t.teardown(() => server.close());
  const peer = await RawPeer.connect(server.port);
  t.teardown(() => peer.close());
  await peer.handshake(secret);
  peer.socket.pause(); // reads nothing more: the answers fill the socket buffers, then the server's
  let sent = 0;
  while (server.stats().paused === 0 && sent < 500) {
    const run = new Promise<void>((resolve) => waiters.set(sent + 1, resolve));
    peer.send({ type: 'call', id: ++sent, op: 'big', appId: 'a', chatId: 'c', args: [], budgetMs: 60_000 });
    await run;
    await new Promise((resolve) => setImmediate(resolve)); // the answer is written on the next tick
  }
  t.equal(server.stats().paused, 1, `past 1 MiB unwritten the server stopped reading (after ${sent} answers of 900 KiB)`);
  peer.send({ type: 'call', id: ++sent, op: 'big', appId: 'a', chatId: 'c', args: [], budgetMs: 60_000 });
  peer.socket.resume();
  // hello, welcome, then one answer per call, in order
  t.match(await peer.message(1 + sent), { type: 'ok', id: sent }, 'once the caller reads again, every call is answered');
  t.equal(ran, sent, 'the call sent while paused ran after the drain');
  t.equal(server.stats().paused, 0);
});
