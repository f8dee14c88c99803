import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { whileRunning } from '../lib/cleanup.ts';
import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { inParallel, provisionApp } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import { fanoutStep, roomConnections, round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/**
 * The limits a flooding user meets, at their defaults (common/config/schema.ts), with what the
 * flood sends of each action per second per socket: the whole WS_ACTIONS_PER_SECOND (50), of which
 * sends within USER_SENDS_PER_SECOND (50), writes within USER_WRITES_PER_SECOND (20) and typing
 * within USER_TYPING_PER_SECOND (5); and the application's APP_ACTIONS_PER_SECOND (2000) per node.
 */
const LIMITS = { APP_ACTIONS_PER_SECOND: '2000', WS_ACTIONS_PER_SECOND: '50', USER_SENDS_PER_SECOND: '50', USER_WRITES_PER_SECOND: '20', USER_TYPING_PER_SECOND: '5', USER_REQUESTS_PER_SECOND: '200' };
const MIX = { 'message.send': 25, 'message.edit': 6, 'reaction.add': 5, 'reaction.remove': 4, 'read.mark': 4, 'message.delete': 1, 'typing.start': 5 };
const GOAL_P99_MS = 50;

/**
 * One node on embedded defaults and two tenants: a quiet one whose users send at a steady rate
 * (open loop, latency from each message's intended send time to its arrival at every member), and
 * a flooding one whose sockets (one per user, in direct chats of two) send every kind of action at
 * the limits. The quiet tenant runs alone first, then again while the flood runs (a process of its
 * own, bench/load/flood.ts); the figures are the quiet tenant's latency in both and their ratio,
 * and what the flood had answered.
 */
export async function flood(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const sockets = o.num('sockets', o.smoke ? 20 : 1000);
  const limits = { ...LIMITS, APP_ACTIONS_PER_SECOND: String(o.num('app-actions', Number(LIMITS.APP_ACTIONS_PER_SECOND))) };
  const rate = o.num('rate', o.smoke ? 20 : 100);
  const rooms = o.num('rooms', 4);
  const members = o.num('members', 5);
  const plan = { rooms, members, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, p99LimitMs: GOAL_P99_MS };
  const rows: Row[] = [];
  const notes = [
    `The flooding tenant: ${sockets} sockets, one per user, each sending per second ${Object.entries(MIX).map(([k, n]) => `${n} ${k}`).join(', ')} (${Object.values(MIX).reduce((a, b) => a + b, 0)} actions: WS_ACTIONS_PER_SECOND), under the limits ${Object.entries(limits).map(([k, v]) => `${k}=${v}`).join(', ')}.`,
    `The quiet tenant: ${rooms} groups of ${members} members, ${rate} msgs/s in all (open loop). Its latency is from each message's intended send time to its arrival at each member.`,
    'Everything shares this machine: the node, the flooding process and the load generator.',
  ];
  if (!ctx.systems.includes('chat')) return { parameters: { sockets }, rows, summary: {}, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(5, 'chat: starting');
  let target: Target | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'bench-flood-'));
  try {
    target = await startSingle('chat', { users: rooms * members, env: limits, profileDir: ctx.profileDir });
    const node = target.nodes[0]!;
    ctx.progress.stage(`chat: the flooding tenant's ${sockets} users`);
    const attacker = await provisionApp(target.control!, [node], sockets);
    const pairs = Math.ceil(sockets / 2);
    const chatIds = await inParallel(pairs, 16, async (i) => {
      const [a, b] = [attacker.users[2 * i]!, attacker.users[2 * i + 1] ?? attacker.users[0]!];
      const create = () => fetch(`${node}/api/chats`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${a.jwt}` }, body: JSON.stringify({ type: 'direct', userId: b.userId }) });
      // The flooding application's own budget (APP_ACTIONS_PER_SECOND) paces its setup too.
      let res = await create();
      for (let attempt = 0; res.status === 429 && attempt < 50; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await create();
      }
      if (res.status !== 201 && res.status !== 200) throw new Error(`direct chat ${i}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { chatId: string }).chatId;
    });
    ctx.progress.step();
    const opened = await ctx.pool.open(await roomConnections(target, rooms, members));
    if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);

    ctx.progress.stage('chat: the quiet tenant alone');
    const alone = await fanoutStep(ctx, target, plan, rate);
    rows.push({ phase: 'quiet tenant alone', ...alone.row });
    ctx.progress.step();

    ctx.progress.stage(`chat: the quiet tenant while ${sockets} sockets flood`);
    const file = join(dir, 'flood.json');
    const floodMs = plan.warmupMs + plan.durationMs + 6000;
    writeFileSync(file, JSON.stringify({ base: node, sockets: attacker.users.map((u, i) => ({ jwt: u.jwt, chatId: chatIds[Math.floor(i / 2)]! })), mix: MIX, durationMs: floodMs }));
    const child = spawn(process.execPath, ['--import', 'tsx', new URL('../load/flood.ts', import.meta.url).pathname, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    const untrack = whileRunning(async () => void child.kill('SIGKILL'));
    const lines: Record<string, any>[] = [];
    const waitFor = (pred: (l: Record<string, any>) => boolean) =>
      new Promise<Record<string, any>>((resolve, reject) => {
        const found = lines.find(pred);
        if (found) return resolve(found);
        const rl = createInterface({ input: child.stdout! });
        rl.on('line', (line) => {
          const parsed = JSON.parse(line) as Record<string, any>;
          lines.push(parsed);
          if (pred(parsed)) resolve(parsed);
        });
        child.once('exit', (code) => reject(new Error(`the flood exited with ${code}`)));
      });
    try {
      const open = await waitFor((l) => 'open' in l);
      if (open.open !== sockets) throw new Error(`the flood opened ${open.open} of ${sockets} sockets`);
      const floodStart = Date.now();
      const before = await processStats(target.pids);
      const floodBefore = await processStats([child.pid!]);
      // The flood's first second (every socket's first send and its ack) is not measured.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const during = await fanoutStep(ctx, target, plan, rate);
      const after = await processStats(target.pids);
      const floodAfter = await processStats([child.pid!]);
      const done = await waitFor((l) => l.done === true);
      const floodSeconds = (Date.now() - floodStart) / 1000;
      const answered = done.answered as Record<string, Record<string, number>>;
      const byOutcome: Record<string, number> = {};
      for (const outcomes of Object.values(answered)) for (const [k, n] of Object.entries(outcomes)) byOutcome[k] = (byOutcome[k] ?? 0) + n;
      rows.push({
        phase: 'quiet tenant during the flood',
        ...during.row,
        floodActionsPerSecond: round(done.sent / done.seconds),
        floodAcceptedPerSecond: round((byOutcome.ok ?? 0) / done.seconds),
        floodRefusedByCode: Object.entries(byOutcome).filter(([k]) => k !== 'ok').map(([k, n]) => `${k} ${n}`).join(', ') || null,
        floodUnanswered: done.unanswered,
        nodeCpuCoresDuringFlood: round((after.cpuSeconds - before.cpuSeconds) / floodSeconds, 2),
        // The flooding process shares the machine: what it takes, the node cannot have.
        floodProcessCpuCores: round((floodAfter.cpuSeconds - floodBefore.cpuSeconds) / floodSeconds, 2),
      });
      ctx.log(`flood: ${JSON.stringify(done)}`);
    } finally {
      child.kill('SIGKILL');
      untrack();
    }
    ctx.progress.step();
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const [alone, during] = rows;
  const summary: Record<string, unknown> = {};
  if (alone && during) {
    summary.p99AloneMs = alone.p99Ms;
    summary.p99DuringFloodMs = during.p99Ms;
    summary.p99Ratio = round(Number(during.p99Ms) / Number(alone.p99Ms), 2);
    summary.goal = { want: `quiet tenant's p99 < ${GOAL_P99_MS} ms during the flood`, got: during.p99Ms, met: Number(during.p99Ms) < GOAL_P99_MS && Number(during.deliveredPct) >= 99.9 };
  }
  return { parameters: { sockets, mix: MIX, limits, rate, rooms, members, seconds: o.seconds, warmup: o.warmup, workers: ctx.pool.size }, rows, summary, notes };
}
