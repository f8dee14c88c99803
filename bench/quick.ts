import WebSocket from 'ws';
import { startService } from '../bin/spawn.ts';

/**
 * A quick local measurement of the hot path: G group chats × M members connected over WebSocket,
 * one sender per group keeping W sends in flight for D seconds. Reports messages acknowledged per
 * second (durable) and deliveries per second (message.new frames received by all members), and
 * the ack latency. Bounded in time; stops its own service. Not a timed test: a figure to read.
 */
const HELP = `Usage: npm run bench:quick -- [--groups G] [--members M] [--window W] [--seconds D]
  --groups   group chats (default 4)
  --members  members per group, sender included (default 10)
  --window   sends in flight per sender (default 64)
  --seconds  measured duration (default 10)
`;
const args = process.argv.slice(2);
if (args.includes('--help')) {
  process.stdout.write(HELP);
  process.exit(0);
}
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : def;
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive integer`);
  return v;
};
const G = opt('groups', 4);
const M = opt('members', 10);
const W = opt('window', 64);
const D = opt('seconds', 10);

const unlimited = { USER_SENDS_PER_SECOND: '10000000', WS_ACTIONS_PER_SECOND: '10000000', USER_REQUESTS_PER_SECOND: '10000000', LOGIN_MAX_PER_ADDRESS: '100000' };
const svc = await startService(unlimited);
const post = async (url: string, body: unknown, token?: string) => {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as Record<string, any>;
};

try {
  const reg = await post(`${svc.controlUrl}/api/auth/register`, { companyName: 'Bench', email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const app = await post(`${svc.controlUrl}/api/client/apps`, { name: 'bench' }, reg.accessToken);
  const key = (await post(`${svc.controlUrl}/api/client/apps/${app.id}/keys`, undefined, reg.accessToken)).token as string;
  const users: { userId: string; jwt: string }[] = [];
  for (let i = 0; i < G * M; i++) {
    const u = await post(`${svc.nodeUrl}/api/users`, { username: `b${i}` }, key);
    const s = await post(`${svc.nodeUrl}/api/users/signin`, { userId: u.userId }, key);
    users.push({ userId: u.userId, jwt: s.jwt });
  }
  let delivered = 0;
  let acked = 0;
  const latencies: number[] = [];
  const groups: { chatId: string; sender: WebSocket; members: WebSocket[] }[] = [];
  for (let g = 0; g < G; g++) {
    const members = users.slice(g * M, (g + 1) * M);
    const chat = await post(`${svc.nodeUrl}/api/chats`, { type: 'group', name: `g${g}`, memberIds: members.slice(1).map((m) => m.userId) }, members[0]!.jwt);
    const sockets = await Promise.all(
      members.map(
        (m) =>
          new Promise<WebSocket>((resolve, reject) => {
            const ws = new WebSocket(`${svc.nodeUrl.replace('http', 'ws')}/ws?token=${m.jwt}`);
            ws.on('message', (data) => {
              const text = data.toString();
              if (text.includes('"message.new"')) delivered++;
              else if (text.startsWith('{"v":1,"type":"ready"')) resolve(ws);
            });
            ws.on('error', reject);
          }),
      ),
    );
    groups.push({ chatId: chat.chatId, sender: sockets[0]!, members: sockets });
  }

  let running = true;
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  const pending = new Map<string, number>();
  let nextId = 0;
  for (const g of groups) {
    const sendOne = () => {
      if (!running) return;
      const id = `s${nextId++}`;
      pending.set(id, performance.now());
      g.sender.send(JSON.stringify({ type: 'message.send', id, chatId: g.chatId, content: 'benchmark message of modest length' }));
    };
    g.sender.on('message', (data) => {
      const text = data.toString();
      if (!text.startsWith('{"v":1,"type":"ack"') && !text.startsWith('{"v":1,"type":"error"')) return;
      const id = /"id":"(s\d+)"/.exec(text)?.[1];
      const t0 = id === undefined ? undefined : pending.get(id);
      if (t0 === undefined || !id) return;
      pending.delete(id);
      if (text.includes('"type":"ack"')) {
        acked++;
        latencies.push(performance.now() - t0);
      }
      sendOne();
    });
    for (let i = 0; i < W; i++) sendOne();
  }
  await new Promise((r) => setTimeout(r, D * 1000));
  running = false;
  const seconds = (performance.now() - started) / 1000;
  const snapshot = { acked, delivered };
  const cpu = process.cpuUsage(cpuStart);
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]?.toFixed(2);
  const result = {
    date: new Date().toISOString(),
    groups: G,
    membersPerGroup: M,
    window: W,
    seconds: Number(seconds.toFixed(2)),
    ackedPerSecond: Math.round(snapshot.acked / seconds),
    deliveredPerSecond: Math.round(snapshot.delivered / seconds),
    ackLatencyMs: { p50: pct(50), p99: pct(99) },
    generatorCpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  for (const g of groups) for (const ws of g.members) ws.terminate();
} finally {
  await svc.stop();
}
