import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeScript } from '../../bin/spawn.ts';
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
 * within USER_TYPING_PER_SECOND (5); and the application's APP_ACTIONS_PER_SECOND (1000) per node.
 */
const LIMITS = { APP_ACTIONS_PER_SECOND: '1000', WS_ACTIONS_PER_SECOND: '50', USER_SENDS_PER_SECOND: '50', USER_WRITES_PER_SECOND: '20', USER_TYPING_PER_SECOND: '5', USER_REQUESTS_PER_SECOND: '200' };
const MIX = { 'message.send': 25, 'message.edit': 6, 'reaction.add': 5, 'reaction.remove': 4, 'read.mark': 4, 'message.delete': 1, 'typing.start': 5 };
const GOAL_P99_MS = 50;

/**
 * One node on embedded defaults and two tenants: a quiet one whose users send at a steady rate
 * (open loop, latency from each message's intended send time to its arrival at every member), and
 * a flooding one whose sockets (one per user, in direct chats of two) send every kind of action at
 * the limits. The quiet tenant runs alone first, then again during each flood (`--modes`: one that
 * obeys retry hints, one that ignores them; a process of its own, bench/load/flood.ts); the
 * figures are the quiet tenant's latency in each and its ratio to alone, and what each flood had
 * answered, how many of its sockets were closed and how its reconnects were answered.
 */
export async function flood(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const sockets = o.num('sockets', o.smoke ? 20 : 1000);
  const limits = { ...LIMITS, APP_ACTIONS_PER_SECOND: String(o.num('app-actions', Number(LIMITS.APP_ACTIONS_PER_SECOND))) };
  const rate = o.num('rate', o.smoke ? 20 : 100);
  const rooms = o.num('rooms', 4);
  const members = o.num('members', 5);
  const modes = (o.list('modes') ?? ['obey', 'ignore']) as FloodMode[];
  for (const m of modes) if (m !== 'obey' && m !== 'ignore') throw new Error(`--modes: obey or ignore, not ${m}`);
  const plan = { rooms, members, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, p99LimitMs: GOAL_P99_MS };
  const rows: Row[] = [];
  const notes = [
    `The flooding tenant: ${sockets} sockets, one per user, each sending per second ${Object.entries(MIX).map(([k, n]) => `${n} ${k}`).join(', ')} (${Object.values(MIX).reduce((a, b) => a + b, 0)} actions: WS_ACTIONS_PER_SECOND), under the limits ${Object.entries(limits).map(([k, v]) => `${k}=${v}`).join(', ')}.`,
    `The quiet tenant: ${rooms} groups of ${members} members, ${rate} msgs/s in all (open loop). Its latency is from each message's intended send time to its arrival at each member.`,
    'Two floods, one after the other: "obey" sockets wait as each RATE_LIMITED retryAfter says (a client at the limits); "ignore" sockets send on regardless, reconnect at once when closed and retry refused upgrades every second (a hostile client). Flood actions/s counts what was sent; the rest of the schedule was held back (told to wait, or closed).',
    'Everything shares this machine: the node, the flooding process and the load generator.',
  ];
  if (!ctx.systems.includes('chat')) return { parameters: { sockets }, rows, summary: {}, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(3 + modes.length, 'chat: starting');
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

    for (const mode of modes) {
      ctx.progress.stage(`chat: the quiet tenant while ${sockets} sockets flood (${mode})`);
      rows.push(await floodPhase(ctx, { target, dir, mode, plan, rate, sockets: attacker.users.map((u, i) => ({ jwt: u.jwt, chatId: chatIds[Math.floor(i / 2)]! })) }));
      ctx.progress.step();
    }
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const [alone, ...floods] = rows;
  const summary: Record<string, unknown> = {};
  if (alone && floods.length > 0) {
    summary.p99AloneMs = alone.p99Ms;
    for (const during of floods) {
      const mode = String(during.flood);
      summary[mode] = {
        p99DuringFloodMs: during.p99Ms,
        p99Ratio: round(Number(during.p99Ms) / Number(alone.p99Ms), 2),
        goal: { want: `quiet tenant's p99 < ${GOAL_P99_MS} ms during the flood`, got: during.p99Ms, met: Number(during.p99Ms) < GOAL_P99_MS && Number(during.deliveredPct) >= 99.9 },
      };
    }
  }
  return { parameters: { sockets, mix: MIX, limits, modes, rate, rooms, members, seconds: o.seconds, warmup: o.warmup, workers: ctx.pool.size }, rows, summary, notes };
}

type FloodMode = 'obey' | 'ignore';

/**
 * One flood (a process of its own, bench/load/flood.ts) and the quiet tenant measured while it
 * runs, from its second second on: the row has the quiet tenant's latency and what the flood sent,
 * had answered, and how its sockets were closed and their reconnects answered.
 */
async function floodPhase(
  ctx: Context,
  p: { target: Target; dir: string; mode: FloodMode; plan: Parameters<typeof fanoutStep>[2]; rate: number; sockets: { jwt: string; chatId: string }[] },
): Promise<Row> {
  const { target, plan } = p;
  const file = join(p.dir, `flood-${p.mode}.json`);
  const floodMs = plan.warmupMs + plan.durationMs + 6000;
  writeFileSync(file, JSON.stringify({ base: target.nodes[0]!, sockets: p.sockets, mix: MIX, durationMs: floodMs, mode: p.mode }));
  const child = spawn(process.execPath, [...nodeScript('bench/load/flood.ts'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const untrack = whileRunning(async () => void child.kill('SIGKILL'));
  const lines: Record<string, any>[] = [];
  const waiters: { pred: (l: Record<string, any>) => boolean; resolve: (l: Record<string, any>) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const parsed = JSON.parse(line) as Record<string, any>;
    lines.push(parsed);
    for (const w of waiters) if (w.pred(parsed)) w.resolve(parsed);
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the flood exited with ${code}`))));
  exited.catch(() => undefined);
  const waitFor = (pred: (l: Record<string, any>) => boolean) =>
    Promise.race([new Promise<Record<string, any>>((resolve) => (lines.find(pred) ? resolve(lines.find(pred)!) : waiters.push({ pred, resolve }))), exited]);
  try {
    const open = await waitFor((l) => 'open' in l);
    if (open.open !== p.sockets.length) throw new Error(`the flood opened ${open.open} of ${p.sockets.length} sockets`);
    const floodStart = Date.now();
    const before = await processStats(target.pids);
    const floodBefore = await processStats([child.pid!]);
    // The flood's first second (every socket's first send and its ack) is not measured.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const during = await fanoutStep(ctx, target, plan, p.rate);
    const after = await processStats(target.pids);
    const floodAfter = await processStats([child.pid!]);
    const done = await waitFor((l) => l.done === true);
    const floodSeconds = (Date.now() - floodStart) / 1000;
    const answered = done.answered as Record<string, Record<string, number>>;
    const byOutcome: Record<string, number> = {};
    for (const outcomes of Object.values(answered)) for (const [k, n] of Object.entries(outcomes)) byOutcome[k] = (byOutcome[k] ?? 0) + n;
    const list = (of: Record<string, number>) => Object.entries(of).map(([k, n]) => `${k}: ${n}`).join(', ') || null;
    ctx.log(`flood (${p.mode}): ${JSON.stringify(done)}`);
    return {
      phase: `quiet tenant during the flood`,
      flood: p.mode,
      ...during.row,
      floodActionsPerSecond: round(done.sent / done.seconds),
      floodAcceptedPerSecond: round((byOutcome.ok ?? 0) / done.seconds),
      floodRefusedByCode: list(Object.fromEntries(Object.entries(byOutcome).filter(([k]) => k !== 'ok'))),
      floodUnanswered: done.unanswered,
      floodSocketsClosed: list(done.closes as Record<string, number>),
      floodUpgradesRefused: list(done.upgrades as Record<string, number>),
      nodeCpuCoresDuringFlood: round((after.cpuSeconds - before.cpuSeconds) / floodSeconds, 2),
      // The flooding process shares the machine: what it takes, the node cannot have.
      floodProcessCpuCores: round((floodAfter.cpuSeconds - floodBefore.cpuSeconds) / floodSeconds, 2),
    };
  } finally {
    child.kill('SIGKILL');
    untrack();
  }
}
