import { check, type Verdict } from './checker.ts';
import { Member, now, rest, Sender, type SendRecord } from './clients.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { capabilities, evidence, haProcess, startHarness, type Harness, type Topology } from './harness.ts';
import { PHASES, type PhaseDef, type Timing } from './phases.ts';
import { violationsOf, writeEvidence, writeReport, type PhaseResult, type RunReport } from './report.ts';

/**
 * One nemesis run: for each phase, fresh busy chats, members on every node, steady load from
 * every node, ONE fault held and healed, recovery, then the checker.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const CHATS_PER_PHASE = 3;
export const USERS = 9;

/** The phase timing for phases of about `seconds` (warm 20%, hold 40%, recover 40%). */
export function timingFor(seconds: number, rate: number): Timing {
  const ms = seconds * 1000;
  return { warmMs: Math.round(ms * 0.2), holdMs: Math.round(ms * 0.4), recoverMs: Math.round(ms * 0.4), drainMs: 30_000, rate };
}

async function createChat(h: Harness, name: string): Promise<string> {
  const [owner, ...others] = h.users;
  for (let attempt = 0; ; attempt++) {
    const url = h.nodesFrom(attempt)()[0]!;
    const r = await rest(url, 'POST', '/api/chats', owner!.jwt, { type: 'group', name, memberIds: others.map((u) => u.userId) }, 10_000).catch((error: Error) => ({ status: 0, body: error.message }));
    if (r.status === 201 || r.status === 200) return r.body.chatId as string;
    if (attempt >= 10) throw new Error(`cannot create a chat: ${r.status} ${JSON.stringify(r.body)}`);
    await sleep(1000);
  }
}

/**
 * The phase's busy chats: all but one placed on one node (phase i: node i mod 3), the last on
 * another, so that a fault on "the owner of busy chats" hits most of them and not all.
 */
async function busyChats(h: Harness, def: PhaseDef): Promise<string[]> {
  const n = h.cluster.nodes.length;
  const main = Number(def.id) % n;
  const onMain: string[] = [];
  const elsewhere: string[] = [];
  for (let k = 0; k < 24 && (onMain.length < CHATS_PER_PHASE - 1 || elsewhere.length < 1); k++) {
    const chatId = await createChat(h, `busy ${def.id}.${k}`);
    const owner = h.cluster.nodes.indexOf(h.cluster.ownerOf(h.appId, chatId));
    if (owner === main && onMain.length < CHATS_PER_PHASE - 1) onMain.push(chatId);
    else if (owner !== main && elsewhere.length < 1) elsewhere.push(chatId);
  }
  return [...onMain, ...elsewhere];
}

/** Waits until every member holds every one of `marks` (seq per chat) and its page reads are done. */
async function membersCaughtUp(members: Member[], marks: Map<string, number>, timeoutMs: number): Promise<string[]> {
  const deadline = now() + timeoutMs;
  const lagging = () => members.filter((m) => [...marks].some(([chatId, seq]) => !m.held.get(chatId)!.has(seq)));
  while (lagging().length > 0 && now() < deadline) await sleep(200);
  await Promise.all(members.map((m) => Promise.race([m.pagesDone(), sleep(Math.max(0, deadline - now()))])));
  return lagging().map((m) => `${m.name} (high ${[...marks.keys()].map((c) => m.high(c)).join('/')} of ${[...marks.values()].join('/')})`);
}

export async function runPhase(h: Harness, def: PhaseDef, timing: Timing, log: (line: string) => void): Promise<PhaseResult> {
  const result: PhaseResult = { id: def.id, title: def.title, notes: [] };
  const began = now();
  const stage = (what: string) => log(`phase ${def.id} +${((now() - began) / 1000).toFixed(1)} s: ${what}`);
  await h.refreshUsers();
  const logFrom = h.cluster.nodes.map((node) => ({ process: node.process, length: node.process.output().length }));
  const chats = await busyChats(h, def);
  const owners = chats.map((c) => h.cluster.nodes.indexOf(h.cluster.ownerOf(h.appId, c)));
  result.notes.push(`busy chats ${chats.map((c, k) => `${c.slice(0, 8)} (owner node ${owners[k]})`).join(', ')}`);

  const n = h.cluster.nodes.length;
  const members = h.users.map((user, i) => new Member({ user, chats, nodes: h.nodesFrom(i % n) }));
  await Promise.all(members.map((m) => m.connect()));
  stage(`${chats.length} chats, ${members.length} members connected; load starts`);
  const senders = h.users.map(
    (user, i) =>
      new Sender({
        user,
        via: i % 2 === 0 ? 'rest' : 'ws',
        chats: chats.map((_, k) => chats[(k + i) % chats.length]!),
        nodes: h.nodesFrom(i % n),
        intervalMs: Math.round((1000 * h.users.length) / timing.rate),
        maxInFlight: 8,
        attemptTimeoutMs: 5000,
        tag: `p${def.id}`,
      }),
  );

  const t0 = now();
  const secs = (x: number) => Math.round((x - t0) / 100) / 10;
  senders.forEach((s) => s.start());
  await sleep(timing.warmMs);
  const ctx = { h, chats, timing, log, notes: result.notes };
  let faultAt = now();
  let healAt = faultAt;
  let healedAt = faultAt;
  let hit: string | undefined;
  try {
    faultAt = now();
    const injected = await def.inject(ctx);
    result.target = injected.target;
    hit = injected.node;
    log(`phase ${def.id}: ${injected.target}`);
    await sleep(injected.holdMs ?? timing.holdMs);
    healAt = now();
    await injected.heal();
    healedAt = now();
    log(`phase ${def.id}: healed in ${((healedAt - healAt) / 1000).toFixed(1)} s`);
    await sleep(timing.recoverMs);
  } catch (error) {
    result.error = (error as Error).stack?.split('\n').slice(0, 3).join(' ') ?? String(error);
    log(`phase ${def.id}: ${result.error}`);
  }
  const loadStoppedAt = now();
  senders.forEach((s) => s.stopNew(loadStoppedAt + timing.drainMs));
  stage('load stopped; unresolved sends retried until they settle');
  await Promise.all(senders.map((s) => s.settled()));
  stage('every send settled');
  result.timeline = { faultAt: secs(faultAt), healAt: secs(healAt), healedAt: secs(healedAt), loadStoppedAt: secs(loadStoppedAt) };

  // One last message per chat, after everything settled: every member must come to hold it (and
  // all before it) by itself, live, by replay, or by paging what it was told to.
  const fence = new Sender({ user: h.users[0]!, via: 'rest', chats, nodes: h.nodesFrom(0), intervalMs: 1000, maxInFlight: 1, attemptTimeoutMs: 5000, tag: `p${def.id}-fence` });
  fence.stopNew(now() + 30_000);
  const marks = new Map<string, number>();
  for (const chatId of chats) {
    const r = await fence.sendOne(chatId, `p${def.id}-fence-${chatId.slice(0, 8)}`);
    if (r.ack) marks.set(chatId, r.ack.seq);
    else result.notes.push(`the fence message of ${chatId.slice(0, 8)} was not acknowledged: ${r.attempts.map((a) => a.detail).join(', ')}`);
  }
  const lagging = await membersCaughtUp(members, marks, 20_000);
  if (lagging.length) result.notes.push(`members short of the fence after 20 s: ${lagging.join(', ')}`);
  await Promise.all(members.map((m) => m.stop()));
  stage('fence sent, members caught up and stopped');

  const sends: SendRecord[] = [...senders.flatMap((s) => s.records), ...fence.records];
  const skipped = senders.reduce((k, s) => k + s.skipped, 0);
  if (skipped) result.notes.push(`${skipped} ticks started no send: the sender had 8 unresolved already`);
  const unknown = new Map<string, number>();
  for (const a of sends.flatMap((x) => x.attempts)) if (a.outcome !== 'ack') unknown.set(a.detail, (unknown.get(a.detail) ?? 0) + 1);
  if (unknown.size) result.notes.push(`attempts not acknowledged, by answer: ${[...unknown].sort((a, b) => b[1] - a[1]).map(([d, k]) => `${d} ${k}`).join(', ')}`);
  if (hit) {
    // Requests the node got while it was cut off or paused, answered late or never: where its
    // zombie writes would come from (the checker finds any that were not fenced).
    const late = sends.flatMap((x) => x.attempts).filter((a) => a.node === hit && a.outcome === 'unknown' && a.at + a.ms >= faultAt && a.at <= healAt);
    result.notes.push(`${late.length} attempts sent to ${hit} went unanswered or failed during the fault (${[...new Set(late.map((a) => a.detail))].slice(0, 4).join(', ')})`);
  }
  // Nodes started from a work tree that changed between their starts speak different bus versions.
  h.cluster.nodes.forEach((node, i) => {
    const from = logFrom[i]?.process === node.process ? logFrom[i]!.length : 0;
    const foreign = node.process.output().slice(from).split('\n').filter((l) => l.includes('unknown protocol version')).length;
    if (foreign) result.notes.push(`node ${i} logged ${foreign} times that it dropped bus frames of an unknown protocol version: the nodes may run different code, and members then miss what it dropped`);
  });
  const pageErrors = members.reduce((k, m) => k + m.pageErrors, 0);
  if (pageErrors) result.notes.push(`${pageErrors} history page reads failed and were retried`);
  const chatsEvidence = await evidence(h, chats, h.users[0]!.jwt);
  const verdict: Verdict = check({ chats: chatsEvidence, sends, members, loadFrom: t0, loadTo: loadStoppedAt, healedAt });
  result.verdict = verdict;
  stage('store read back and checked');
  result.bounds = def.bounds?.(verdict);
  // A missed bound says what the nodes warned of meanwhile (in the test's own output, so CI shows it).
  if (result.bounds?.some((bound) => bound.value >= bound.limit)) {
    h.cluster.nodes.forEach((node, i) => {
      const from = logFrom[i]?.process === node.process ? logFrom[i]!.length : 0;
      const warned = node.process.output().slice(from).split('\n').filter((l) => /"level":(40|50|60)/.test(l));
      for (const line of warned.slice(0, 12)) result.notes.push(`node ${i} logged: ${line.slice(0, 400)}`);
      if (warned.length > 12) result.notes.push(`node ${i} logged ${warned.length - 12} more warnings or errors`);
    });
    result.notes.push(...cassandraWarnings(h, Date.now() - (now() - t0)));
  }
  if (Object.keys(violationsOf(verdict)).length > 0) {
    const file = writeEvidence(`nemesis-phase-${def.id}.json`, {
      phase: def.id,
      t0,
      /** Add to a now() value to get Date.now(): how the records line up with the nodes' log times. */
      wallOffset: Date.now() - now(),
      nodeLogs: h.cluster.nodes.map((node, i) => ({ node: i, url: node.url, membership: node.process.output().split('\n').filter((l) => l.includes('cluster membership changed') || /"level":(40|50)/.test(l)).slice(-200) })),
      timeline: { faultAt, healAt, healedAt, loadStoppedAt },
      chats: chatsEvidence.map((c) => ({ chatId: c.chatId, stored: (c.histories[0]?.messages as { seq: number }[] | undefined)?.map?.((m) => m.seq) })),
      members: members.map((m) => ({ name: m.name, sessions: m.sessions, pages: m.pages, pageErrors: m.pageErrors })),
      sends,
    });
    result.notes.push(`the clients' records and the stored seqs are in ${file}`);
  }
  return result;
}

export interface NemesisOptions {
  topology: Topology;
  t: { teardown(fn: () => unknown): void; comment?(line: string): void };
  timing: Timing;
  /** Phase ids to run (default: all seven). */
  only?: string[];
  log(line: string): void;
  /** Called with each phase's result as soon as it is checked. */
  onPhase?(result: PhaseResult): void;
}

/** Every phase in order on one cluster; writes artifacts/nemesis.json and .md; returns the report. */
export async function runNemesis(o: NemesisOptions): Promise<RunReport> {
  const caps = capabilities();
  const report: RunReport = {
    startedAt: new Date().toISOString(),
    finishedAt: '',
    topology: o.topology.kind,
    capabilities: caps,
    settings: {
      warmSeconds: o.timing.warmMs / 1000,
      holdSeconds: o.timing.holdMs / 1000,
      recoverSeconds: o.timing.recoverMs / 1000,
      sendsPerSecond: o.timing.rate,
      chatsPerPhase: CHATS_PER_PHASE,
      users: USERS,
    },
    phases: [],
  };
  const h = await startHarness({ topology: o.topology, t: o.t, users: USERS, log: o.log });
  try {
    for (const def of PHASES) {
      if (o.only && !o.only.includes(def.id)) continue;
      const missing = def.needs.filter((need) => (need === 'ha' ? o.topology.kind !== 'ha' : !h.faults));
      let result: PhaseResult;
      if (missing.length > 0) {
        result = { id: def.id, title: def.title, skipped: `needs ${missing.map((m) => (m === 'ha' ? 'the HA topology' : 'fault injection (root, nft, cgroup v2)')).join(' and ')}`, notes: [] };
      } else {
        o.log(`phase ${def.id}: ${def.title}`);
        result = await runPhase(h, def, o.timing, o.log);
      }
      report.phases.push(result);
      o.onPhase?.(result);
      report.finishedAt = new Date().toISOString();
      writeReport(report);
    }
  } finally {
    await h.close();
  }
  report.finishedAt = new Date().toISOString();
  writeReport(report);
  return report;
}

/**
 * The WARN and ERROR lines the HA ring's Cassandra nodes logged since `sinceMs` (wall clock), at
 * most 8 a node: the database's side of a missed bound. None on the single topology.
 */
function cassandraWarnings(h: Harness, sinceMs: number): string[] {
  if (h.topology.kind !== 'ha') return [];
  const notes: string[] = [];
  const port = Number(h.topology.cassandra.split(',')[0]!.split(':')[1] ?? 9042);
  for (const [i, host] of h.topology.cassandraAddresses.entries()) {
    try {
      const lines = readFileSync(join(haProcess(host, port, 'cassandra').dir, 'cassandra.log'), 'utf8').split('\n');
      const recent = lines.filter((l) => /^(WARN|ERROR)/.test(l) && Date.parse(`${l.split(/\s+/).slice(2, 4).join('T').replace(',', '.')}Z`) >= sinceMs);
      for (const line of recent.slice(-8)) notes.push(`Cassandra ${i + 1} logged: ${line.slice(0, 300)}`);
    } catch (error) {
      notes.push(`Cassandra ${i + 1}: no log read (${(error as Error).message.slice(0, 120)})`);
    }
  }
  return notes;
}
