import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import t from 'tap';
import { client } from '../helpers/http.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';
import { cgroup2Mount, openFaults, requireFaults, sweepStale } from '../helpers/faults.ts';

/**
 * The fault tool itself (test/helpers/faults.ts), on small processes of the test's own: each agent
 * listens on a loopback address of its own with an echo server (that also streams ticks to a
 * connection that asks for them) and, told on stdin, probes or holds connections to the others.
 */
const AGENT = String.raw`
const net = require('node:net');
const host = process.argv[1];
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const server = net.createServer((s) => {
  let timer;
  s.setEncoding('utf8');
  s.on('error', () => {});
  s.on('data', (d) => {
    if (d.startsWith('ticks')) timer ??= setInterval(() => s.write('tick\n'), 50);
    else s.write(d);
  });
  s.on('close', () => clearInterval(timer));
});
server.listen(0, host, () => out({ port: server.address().port }));
function probe(host, port, timeoutMs) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    let got = '';
    const done = (ok) => { s.destroy(); clearTimeout(timer); resolve(ok); };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.setEncoding('utf8');
    s.on('connect', () => s.write('ping\n'));
    s.on('data', (d) => { got += d; if (got === 'ping\n') done(true); });
    s.on('error', () => done(false));
  });
}
const holds = new Map();
require('node:readline').createInterface({ input: process.stdin }).on('line', async (line) => {
  const c = JSON.parse(line);
  if (c.op === 'probe') out({ id: c.id, ok: await probe(c.host, c.port, c.timeoutMs) });
  else if (c.op === 'hold') {
    const h = { ticks: 0 };
    holds.set(c.hold, h);
    const s = net.connect({ host: c.host, port: c.port }, () => { s.write('ticks\n'); out({ id: c.id, ok: true }); });
    s.setEncoding('utf8');
    s.on('data', (d) => { h.ticks += d.split('tick').length - 1; });
    s.on('error', () => {});
  } else if (c.op === 'ticks') out({ id: c.id, ticks: holds.get(c.hold).ticks });
});
`;

interface Agent {
  name: string;
  address: string;
  port: number;
  pid: number;
  child: ChildProcess;
  /** Connects to `to`, writes a line and waits for its echo. */
  probe(to: Agent, timeoutMs?: number): Promise<boolean>;
  /** Opens a connection to `to` that it streams ticks over (20 a second), counted by ticks(). */
  hold(to: Agent, hold: string): Promise<void>;
  ticks(hold: string): Promise<number>;
}

async function startAgent(name: string, address: string): Promise<Agent> {
  const child = spawn(process.execPath, ['-e', AGENT, address], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting = new Map<number, (reply: Record<string, unknown>) => void>();
  let port: number | undefined;
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const reply = JSON.parse(line) as Record<string, unknown>;
    if (typeof reply.port === 'number') {
      port = reply.port;
      listening();
    } else waiting.get(reply.id as number)?.(reply);
  });
  let ids = 0;
  const ask = (command: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = ++ids;
      waiting.set(id, resolve);
      child.stdin!.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  await ready;
  return {
    name,
    address,
    port: port!,
    pid: child.pid!,
    child,
    probe: async (to, timeoutMs = 600) => (await ask({ op: 'probe', host: to.address, port: to.port, timeoutMs })).ok === true,
    hold: async (to, hold) => void (await ask({ op: 'hold', host: to.address, port: to.port, hold })),
    ticks: async (hold) => (await ask({ op: 'ticks', hold })).ticks as number,
  };
}

/** The same probe from the test process itself, which is never enlisted. */
function probeFromTest(to: Agent, timeoutMs = 600): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: to.address, port: to.port });
    let got = '';
    const done = (ok: boolean) => {
      s.destroy();
      clearTimeout(timer);
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    s.setEncoding('utf8');
    s.on('connect', () => s.write('ping\n'));
    s.on('data', (d: string) => {
      got += d;
      if (got === 'ping\n') done(true);
    });
    s.on('error', () => done(false));
  });
}

/** Whether anything accepts a connection at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    s.setTimeout(1000, () => (s.destroy(), resolve(false)));
    s.on('connect', () => (s.destroy(), resolve(true)));
    s.on('error', () => resolve(false));
  });
}

const alive = (pid: number) => {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
};

const tables = () => spawnSync('nft', ['list', 'tables'], { encoding: 'utf8' }).stdout;
const cgroupOf = (pid: number) => readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether ticks arrive on a held connection within `ms` (polled; retransmission after a heal takes a few seconds). */
async function ticking(agent: Agent, hold: string, ms: number): Promise<boolean> {
  const before = await agent.ticks(hold);
  for (const deadline = Date.now() + ms; Date.now() < deadline; ) {
    await sleep(100);
    if ((await agent.ticks(hold)) > before) return true;
  }
  return false;
}

let skipped = '';
if (!requireFaults((line) => t.comment((skipped = line)))) t.plan(0, `${skipped} (CI=true fails instead)`);
else {
  // Starting a cluster (keyspace DDL) takes 25-80 s on a busy Cassandra, the rest about 20 s.
  t.setTimeout(240_000);
  // 127.0.0.5x: addresses no other suite uses.
  const [a, b, c] = await Promise.all([startAgent('a', '127.0.0.51'), startAgent('b', '127.0.0.52'), startAgent('c', '127.0.0.53')]);
  t.teardown(() => [a, b, c].forEach((agent) => agent.child.kill('SIGKILL')));
  const agents = [a!, b!, c!];
  const home = cgroupOf(a!.pid);

  /** Who reaches whom, as "a>b" entries: every agent and the test process to every agent. */
  const reach = async (): Promise<string[]> => {
    const pairs = [
      ...agents.flatMap((from) => agents.filter((to) => to !== from).map((to) => [from.name, to, () => from.probe(to)] as const)),
      ...agents.map((to) => ['test', to, () => probeFromTest(to)] as const),
    ];
    const results = await Promise.all(pairs.map(async ([from, to, probe]) => ((await probe()) ? `${from}>${to.name}` : undefined)));
    return results.filter((r): r is string => r !== undefined).sort();
  };
  const everyone = ['a>b', 'a>c', 'b>a', 'b>c', 'c>a', 'c>b', 'test>a', 'test>b', 'test>c'];

  t.test('cut, isolate and heal between enlisted processes; nothing else is touched', async (t) => {
    t.same(await reach(), everyone, 'before any fault, everyone reaches everyone');
    // A connection a makes before it is enlisted keeps its old cgroup: the tool must still cut it.
    await a!.hold(b!, 'old');
    const faults = await openFaults(t);
    await faults.enlist('a', a!.pid, a!.address);
    await faults.enlist('b', b!.pid, b!.address);
    t.equal(cgroupOf(a!.pid), `0::/${faults.table}/a`, 'a is in a cgroup of its own');
    await a!.hold(b!, 'new');
    t.ok((await ticking(a!, 'old', 2000)) && (await ticking(a!, 'new', 2000)), 'b streams ticks to a on both held connections');

    const cut = await faults.cut('a', [b!.address]);
    t.equal(cut.rules.length, 8, 'eight rules: a to b and b to a, by cgroup and by connection, out and in');
    const listing = faults.listing();
    t.ok(cut.rules.every((r) => listing.includes(`# handle ${r.handle}`)), 'the handles returned are the rules in the table');
    const comments = [...listing.matchAll(/ drop comment "([^"]*)"/g)].map((m) => m[1]!);
    t.ok(comments.length === 8 && comments.every((c) => c.startsWith(`pid=${process.pid} `)), `every rule's comment names the test's pid: ${comments[0]}`);
    t.same(await reach(), ['a>c', 'b>c', 'c>a', 'c>b', 'test>a', 'test>b', 'test>c'], 'a and b no longer reach each other either way; c and the test process still reach both');
    // Only input rules can stop these: b writes the ticks, a only acknowledges them.
    t.notOk(await ticking(a!, 'new', 1500), 'ticks b sends stop arriving on the connection a made after it was enlisted (input rule, by cgroup)');
    t.notOk(await ticking(a!, 'old', 500), 'and on the connection it made before (input rule, by address and port)');

    await cut.heal();
    t.notOk(faults.listing().includes('drop'), 'heal removes every rule of the cut');
    t.same(await reach(), everyone, 'after the heal, everyone reaches everyone');
    t.ok((await ticking(a!, 'new', 10_000)) && (await ticking(a!, 'old', 10_000)), 'and the held connections carry ticks again');

    await faults.isolate('a');
    t.same(await reach(), ['b>c', 'c>a', 'c>b', 'test>a', 'test>b', 'test>c'], 'isolated, a reaches nobody and enlisted b cannot reach it; processes not enlisted (c, the test) still do');
    await faults.heal();
    t.same(await reach(), everyone, 'heal() removes the isolation');

    await t.rejects(faults.cut('a', ['10.0.0.1']), /outside 127\.0\.0\.0\/8/, 'an address outside 127.0.0.0/8 is refused');
    await t.rejects(faults.cut('a', ['0.0.0.0/0']), /outside 127\.0\.0\.0\/8|prefix/, 'so is the whole address space');
    await t.rejects(faults.cut('a', [a!.address]), /its own address/, 'a process is not cut from its own address');
    await t.rejects(faults.enlist('c', c!.pid, '192.168.1.1'), /outside 127\.0\.0\.0\/8/, 'nor enlisted with an address outside it');
    await t.rejects(faults.cut('c', [b!.address]), /not enlisted/, 'only enlisted processes are cut');
    await faults.cut('b', ['127.0.0.53']);
    t.same(await reach(), ['a>b', 'a>c', 'b>a', 'c>a', 'c>b', 'test>a', 'test>b', 'test>c'], 'a cut stays until healed (the teardown removes it)');
  });

  t.test('a process that is gone gives up its name and its address to the one that replaces it', async (t) => {
    const faults = await openFaults(t);
    const first = await startAgent('d', '127.0.0.54');
    await faults.enlist('d', first.pid, first.address);
    const other = await startAgent('e', '127.0.0.55');
    t.teardown(() => other.child.kill('SIGKILL'));
    await t.rejects(faults.enlist('e', other.pid, first.address), /taken by live process/, "a live member's address is refused");
    await t.rejects(faults.enlist('d', other.pid), /taken by live process/, "and so is a live member's name");
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const restarted = await startAgent('d', '127.0.0.54');
    t.teardown(() => restarted.child.kill('SIGKILL'));
    await faults.enlist('d-r1', restarted.pid, restarted.address);
    t.same([...faults.members.keys()], ['d-r1'], 'the restarted process takes the address under a new name');
    await faults.enlist('e', other.pid, other.address);
    await faults.cut('e', [restarted.address]);
    t.notOk(await other.probe(restarted), 'and is cut like the one before');
    t.ok(await probeFromTest(restarted), 'while the test still reaches it');
  });

  t.test('teardown removed the table, the cgroups and the bind mount, and moved the processes back', async (t) => {
    const mine = new RegExp(`chat_faults_${process.pid}_`);
    t.notMatch(tables(), mine, `no table of this test left: ${tables().trim() || 'none'}`);
    t.equal(cgroupOf(a!.pid), home, 'a is back in its cgroup');
    t.equal(cgroupOf(b!.pid), home, 'b is back in its cgroup');
    const mount = cgroup2Mount()!;
    t.notMatch(readFileSync('/proc/mounts', 'utf8'), mine, 'no bind mount left');
    t.notOk(spawnSync('ls', [mount, '/sys/fs/cgroup'], { encoding: 'utf8' }).stdout.split('\n').some((l) => mine.test(l)), 'no cgroup directory left');
    t.same(await reach(), everyone, 'everyone reaches everyone');
  });

  t.test('pause stops a process answering; resume makes it answer again', async (t) => {
    const faults = await openFaults(t);
    faults.pause(b!.pid);
    t.notOk(await probeFromTest(b!, 800), 'paused, b accepts (the kernel does) but does not answer');
    faults.resume(b!.pid);
    t.ok(await probeFromTest(b!, 2000), 'resumed, it answers');
    faults.pause(b!.pid);
    t.notOk(await probeFromTest(b!, 500), 'paused again');
    // Left paused: the teardown resumes it.
  });

  t.test('a paused process is resumed at teardown', async (t) => {
    t.ok(await probeFromTest(b!, 2000), 'b answers');
  });

  for (const ending of ['SIGTERM', 'SIGINT', 'exit'] as const) {
    t.test(`a test process that ends by ${ending} before its teardown leaves nothing behind`, async (t) => {
      const faults = new URL('../helpers/faults.ts', import.meta.url).pathname;
      const script = `
        import { openFaults } from ${JSON.stringify(faults)};
        const f = await openFaults({ teardown() {} });
        await f.enlist('c', ${c!.pid}, '${c!.address}');
        await f.cut('c', ['${a!.address}']);
        f.pause(${b!.pid});
        console.log(JSON.stringify({ table: f.table }));
        if (${JSON.stringify(ending)} === 'exit') process.exit(3);
        setInterval(() => {}, 1000);
      `;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<[number | null, string | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));
      const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
      const { table } = JSON.parse(line) as { table: string };
      if (ending !== 'exit') {
        t.match(tables(), table, 'its table is there while it runs');
        t.notOk(await c!.probe(a!), 'and its cut holds');
        child.kill(ending);
      }
      const [code, sig] = await exited;
      t.same(ending === 'exit' ? code : sig, ending === 'exit' ? 3 : ending, `it ended by ${ending} (the handlers re-raise the signal)`);
      t.notMatch(tables(), table, 'its table is gone');
      t.equal(cgroupOf(c!.pid), home, 'c is back in its cgroup');
      t.notOk(existsSync(`${cgroup2Mount()}/${table}`), 'its cgroup directory is gone');
      t.ok(await c!.probe(a!), 'c reaches a again');
      t.ok(await probeFromTest(b!, 2000), 'and the process it paused answers');
    });
  }

  t.test('sweepStale removes what a killed test left, and nothing of a live one', async (t) => {
    const faults = await openFaults(t);
    const dead = spawnSync('true').pid!;
    const stale = `chat_faults_${dead}_0badc0de`;
    spawnSync('nft', ['add', 'table', 'inet', stale]);
    const mount = cgroup2Mount()!;
    spawnSync('mkdir', ['-p', `${mount}/${stale}/x`]);
    t.match(tables(), stale, 'a table and a cgroup of a dead pid');
    const swept = sweepStale();
    t.ok(swept.includes(stale), `swept: ${swept.join(', ')}`);
    t.notMatch(tables(), stale, 'its table is gone');
    t.notOk(existsSync(`${mount}/${stale}`), 'its cgroup is gone');
    t.match(tables(), faults.table, 'the live instance keeps its table');
  });

  t.test('a cluster on addresses of its own (startCluster addresses): a node isolated from the chat owner holds a forwarded send until healed', async (t) => {
    const backends = await clusterBackends(t);
    if (!backends) return;
    const addresses = { control: '127.0.0.57', nodes: ['127.0.0.58', '127.0.0.59'] };
    const cluster = await startCluster({ size: 2, ...backends, addresses });
    t.teardown(() => cluster.stop());
    for (const [i, node] of cluster.nodes.entries()) {
      const address = addresses.nodes[i]!;
      t.ok(node.address === address && node.url === `http://${address}:${node.port}`, `node ${i} serves at ${node.url}`);
      t.match(node.process.output(), new RegExp(`announced as ${address.replaceAll('.', '\\.')}:\\d+`), `node ${i} announces its node-to-node listener on ${address}`);
      t.ok(node.pid === node.process.pid && alive(node.pid), `node ${i}'s pid ${node.pid} is exposed`);
      t.notOk(await accepts('127.0.0.1', node.port), `node ${i} does not listen on 127.0.0.1`);
    }
    t.equal(new URL(cluster.control.controlUrl).hostname, addresses.control, `the control service serves at ${cluster.control.controlUrl}`);
    t.ok(alive(cluster.control.pid), `its pid ${cluster.control.pid} is exposed`);

    const { users, appId } = await clusterApp(cluster, ['ann', 'ben']);
    const [ann, ben] = users as [(typeof users)[0], (typeof users)[0]];
    const chat = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'faults', memberIds: [ben.userId] }, ann.jwt)).body;
    const owner = cluster.ownerOf(appId, chat.chatId);
    const other = cluster.nodes.find((n) => n !== owner)!;
    const send = (key: string) => client(other.url).post(`/api/messages/${chat.chatId}`, { content: key, idempotencyKey: key }, ann.jwt);
    t.equal((await send('before')).status, 201, 'a send through the node that does not own the chat is forwarded to the owner');

    const faults = await openFaults(t);
    for (const [i, node] of cluster.nodes.entries()) await faults.enlist(`node${i}`, node.pid, node.address);
    await faults.isolate(`node${cluster.nodes.indexOf(other)}`);
    let settled: number | undefined;
    const pending = send('during').then((r) => ((settled = r.status), r));
    await sleep(2000);
    t.equal(settled, undefined, 'isolated from the owner, the node holds the send (it cannot reach the owner)');
    t.equal((await client(other.url).get('/healthz')).status, 200, "the test's own client still reaches the isolated node");
    await faults.heal();
    const during = await pending;
    t.ok(during.status === 201 || during.status === 503, `healed, the held send settles (${during.status})`);
    let after = 0;
    for (const deadline = Date.now() + 15_000; after !== 200 && after !== 201 && Date.now() < deadline; await sleep(200)) after = (await send('during')).status;
    t.ok(after === 200 || after === 201, `and the send, retried with its idempotency key, is acknowledged (${after})`);
  });
}
