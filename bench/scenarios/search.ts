import { open } from 'lmdb';
import { join } from 'node:path';
import { percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { createGroups, type ChatUser } from '../lib/provision.ts';
import { cassandraTableBytes, clusterServices } from '../lib/services.ts';
import { startSingle, startThree, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { corpus, RARE } from './search-corpus.ts';

/** Goals (issue "Message search"): p99 per query, and indexing's cost on the send path. */
const GOAL_P99_MS = { embedded: 50, cassandra: 100 } as const;
const GOAL_SEND_COST = 1.3;

/**
 * Message search at scale: `messages` messages over `chats` chats (generated text, a Zipf-like
 * vocabulary plus a rare word in about one message of 10,000), sent through the WebSocket API;
 * then a user in `member-of` of those chats searches, closed loop: a rare word, the most common
 * word, and two words with the last as a prefix; p50 and p99 per query on the embedded store (one
 * node) and on Cassandra (three nodes). First, the send path's cost with the index against
 * without it (SEARCH_INDEX=off), in the same run: the sends scenario's WebSocket workload.
 */
export async function search(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const messages = o.num('messages', o.smoke ? 2_000 : 1_000_000);
  const chats = o.num('chats', o.smoke ? 20 : 1_000);
  const memberOf = o.num('member-of', o.smoke ? 5 : 100);
  // `--stores none`: the send cost alone.
  const stores = (o.list('stores') ?? (o.smoke ? ['embedded'] : ['embedded', 'cassandra'])).filter((s) => s !== 'none');
  if (stores.some((s) => s !== 'embedded' && s !== 'cassandra')) throw new Error('--stores must list embedded, cassandra, or be none');
  const concurrency = o.num('concurrency', o.smoke ? 2 : 4);
  const senders = o.num('senders', o.smoke ? 4 : 64);
  const rate = o.num('rate', o.smoke ? 200 : 6_000);
  // The cluster's send cost at a rate both sustain on two cores (at 1,000 offered neither kept up); `--send-cost none` skips both.
  const clusterRate = o.num('cluster-rate', 600);
  const costStores = (o.list('send-cost') ?? (o.smoke ? ['embedded'] : ['embedded', 'cassandra'])).filter((s) => s !== 'none');
  if (costStores.some((s) => s !== 'embedded' && s !== 'cassandra')) throw new Error('--send-cost must list embedded, cassandra, or be none');
  if (memberOf > chats) throw new Error('--member-of must be at most --chats');
  const rows: Row[] = [];
  const summary: Record<string, unknown> = {};
  const notes = [
    `Text: each message 5–12 words drawn from a vocabulary of ${corpus.vocabulary.length} made-up words with Zipf-like frequencies, plus "${RARE}" in about one message of 10,000.`,
    'Queries: closed loop, the same concurrency for each; a page of 20 hits newest first, the user searching every chat it is in.',
    `Send cost: ${rate} sends/s (embedded, one node) and ${clusterRate} sends/s (three nodes on Cassandra) offered at a fixed rate (open loop, the texts above) over WebSocket by ${senders} senders, each in a chat of its own, with SEARCH_INDEX=on and then off; server CPU per acknowledged send (the nodes', and on the cluster Cassandra's too). A fixed rate compares the same work: a closed loop at the highest rate would also count the smaller group commits of the slower one.`,
  ];
  if (!ctx.systems.includes('chat')) return { parameters: { messages }, rows, summary, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(2 * costStores.length + stores.length * 5, 'chat: send cost with and without the index');

  // The send cost on one node (embedded) and on the cluster (three nodes and Cassandra, whose CPU counts too).
  for (const store of costStores) {
    const cost: Record<string, number | null> = {};
    for (const index of ['on', 'off'] as const) {
      const r = await sendCost(ctx, o, store, senders, store === 'embedded' ? rate : clusterRate, index);
      rows.push({ part: 'send cost', store, searchIndex: index, ...r });
      cost[index] = r.serverCpuUsPerSend;
      ctx.progress.step();
    }
    const ratio = cost.on && cost.off ? round(cost.on / cost.off, 3) : null;
    summary[store === 'embedded' ? 'sendCost' : 'clusterSendCost'] = { cpuUsPerSendIndexed: cost.on, cpuUsPerSendUnindexed: cost.off, ratio, goal: { want: `<= ${GOAL_SEND_COST}`, met: ratio !== null && ratio <= GOAL_SEND_COST } };
  }

  for (const store of stores) {
    let target: Target | undefined;
    let stopServices = () => {};
    try {
      ctx.progress.stage(`chat (${store}): starting`);
      if (store === 'cassandra') {
        const started = await clusterServices(ctx);
        stopServices = started.stop;
        target = await startThree('chat', started.services, { users: chats + 1, profileDir: ctx.profileDir });
      } else target = await startSingle('chat', { users: chats + 1, profileDir: ctx.profileDir });
      ctx.progress.step();
      const [searcher, ...owners] = target.app!.users as [ChatUser, ...ChatUser[]];
      const groups = owners.map((owner, i) => (i < memberOf ? [owner, searcher] : [owner]));
      const chatIds = await createGroups(target.nodes[0]!, groups);
      ctx.progress.stage(`chat (${store}): sending ${messages} messages to ${chats} chats`);
      const fill = await fillChats(ctx, target, chatIds, owners, messages);
      ctx.log(`${store}: ${fill.acked} messages in ${fill.seconds} s (${round(fill.acked / fill.seconds)} acked sends/s)`);
      ctx.progress.step();
      const queries = { rare: RARE, common: corpus.vocabulary[0]!, twoWordsPrefix: `${corpus.vocabulary[1]} ${corpus.vocabulary[2]!.slice(0, 3)}` };
      const base = { origin: target.nodes[0]!, method: 'GET' as const, headers: { authorization: `Bearer ${searcher.jwt}` } };
      const measured: Record<string, unknown> = {};
      for (const [kind, q] of Object.entries(queries)) {
        ctx.progress.stage(`chat (${store}): searching ${kind} (${q})`);
        const path = `/api/search/messages?${new URLSearchParams({ q, size: '20' })}`;
        const first = await fetch(`${base.origin}${path}`, { headers: base.headers });
        if (first.status !== 200) throw new Error(`search ${q}: ${first.status} ${await first.text()}`);
        const hits = ((await first.json()) as { hits: unknown[] }).hits.length;
        const share = Math.max(1, Math.round(concurrency / ctx.pool.size));
        const r = await ctx.pool.run({ op: 'http', start: Date.now() + 200, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, requests: [{ ...base, path }], concurrency: share });
        const p = percentiles(r.histogram);
        rows.push({ part: 'query', store, query: kind, q, hitsOnFirstPage: hits, queriesPerSecond: round(r.measuredDelivered / o.seconds), p50Ms: p.p50Ms, p99Ms: p.p99Ms, errors: r.errors });
        measured[kind] = { p50Ms: p.p50Ms, p99Ms: p.p99Ms };
        if (r.errors) ctx.log(`${store} ${kind}: ${r.errors} errors ${JSON.stringify(r.statuses)}`);
        ctx.progress.step();
      }
      const worst = Math.max(...Object.values(measured).map((m) => Number((m as { p99Ms: number }).p99Ms)));
      const goalMs = GOAL_P99_MS[store as keyof typeof GOAL_P99_MS];
      const disk = store === 'embedded' ? (target.dataDir ? lmdbDisk(target.dataDir, fill.acked) : undefined) : cassandraDisk(target.services?.cassandra?.keyspace, fill.acked);
      summary[store] = { messages: fill.acked, ...measured, ...(disk ? { disk } : {}), goal: { p99BelowMs: goalMs, worstP99Ms: worst, met: worst < goalMs } };
      ctx.progress.step();
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
      stopServices();
    }
  }
  return { parameters: { messages, chats, memberOf, stores, concurrency, senders, rate, seconds: o.seconds, workers: ctx.pool.size }, rows, summary, notes };
}

/**
 * The sends scenario's WebSocket workload at a fixed rate against a fresh node (embedded) or
 * cluster of three (cassandra) with SEARCH_INDEX=`index`; CPU per acknowledged send of the nodes
 * and, on the cluster, of Cassandra.
 */
async function sendCost(ctx: Context, o: ScenarioOptions, store: string, senders: number, rate: number, index: 'on' | 'off'): Promise<{ offeredPerSecond: number; ackedPerSecond: number; serverCpuUsPerSend: number | null; p99Ms: number }> {
  ctx.progress.stage(`chat (${store}): sends with SEARCH_INDEX=${index}`);
  let stopServices = () => {};
  let target: Target | undefined;
  try {
    const options = { users: senders, env: { SEARCH_INDEX: index }, profileDir: ctx.profileDir };
    if (store === 'cassandra') {
      const started = await clusterServices(ctx);
      stopServices = started.stop;
      target = await startThree('chat', started.services, options);
    } else target = await startSingle('chat', options);
    const rooms = await createGroups(target.nodes[0]!, target.app!.users.map((u) => [u]));
    const conns: ConnSpec[] = rooms.map((room, i) => ({ system: 'chat', base: target!.nodes[i % target!.nodes.length]!, room, token: target!.app!.users[i]!.jwt, sender: true }));
    const opened = await ctx.pool.open(conns);
    if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
    const pids = [...target.pids, ...(target.services?.cassandraPids ?? [])];
    const before = await processStats(pids);
    const r = await ctx.pool.run({ op: 'fanout', start: Date.now() + 300, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, ratePerSender: rate / conns.length, drainMs: 5000, quietMs: 500, contents: corpus.texts });
    const after = await processStats(pids);
    const row = { offeredPerSecond: rate, ackedPerSecond: round(r.measuredAcked / o.seconds), serverCpuUsPerSend: r.acked === 0 ? null : round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / r.acked, 1), p99Ms: percentiles(r.histogram).p99Ms };
    ctx.log(`${store}, SEARCH_INDEX=${index}: ${row.ackedPerSecond} acked sends/s, ${row.serverCpuUsPerSend} us of server CPU per send`);
    return row;
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
    stopServices();
  }
}

/**
 * Sends `messages` over the chats (one sender each, one in flight: a thousand at once, under the
 * node's load shedding), the refused ones again, in rounds a second apart (the refusals' retry
 * hint) for as long as each round gets some acknowledged: a million messages took ten rounds of
 * shrinking refusals (RATE_LIMITED) on the cluster, and a cap of ten once ended 433 short.
 */
async function fillChats(ctx: Context, target: Target, chatIds: string[], owners: ChatUser[], messages: number): Promise<{ acked: number; seconds: number }> {
  const conns: ConnSpec[] = chatIds.map((room, i) => ({ system: 'chat', base: target.nodes[i % target.nodes.length]!, room, token: owners[i]!.jwt, sender: true }));
  const opened = await ctx.pool.open(conns);
  if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
  const t0 = performance.now();
  let acked = 0;
  let rounds = 0;
  for (let progress = true; acked < messages && progress; rounds++) {
    if (rounds > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    const perSender = Math.ceil((messages - acked) / conns.length);
    const r = await ctx.pool.run({ op: 'sends', start: Date.now() + 100, warmupMs: 0, durationMs: 3_600_000, window: 1, content: '', contents: corpus.texts, drainMs: 10_000, perSender });
    acked += r.acked;
    progress = r.acked > 0;
    if (r.errors) ctx.log(`fill round ${rounds + 1}: ${r.errors} sends refused ${JSON.stringify(r.refused)}, sent again`);
  }
  await ctx.pool.closeAll();
  if (acked < messages) throw new Error(`filling: ${acked} of ${messages} sends acked after ${rounds} rounds, the last acknowledging none`);
  return { acked, seconds: round((performance.now() - t0) / 1000, 1) };
}

/** Bytes on disk of the keyspace's search tables and of its messages table, per message, after a flush (the single node of scripts/services.sh). */
function cassandraDisk(keyspace: string | undefined, messages: number): Record<string, number | string> {
  if (keyspace === undefined) return { error: 'the keyspace is not known' };
  const bytes = cassandraTableBytes(keyspace);
  if (typeof bytes === 'string') return { error: bytes };
  const search = ['search_hour_postings', 'search_day_hours', 'search_terms'].reduce((n, t) => n + (bytes[t] ?? 0), 0);
  return { searchBytesPerMessage: round(search / messages, 1), postingsBytesPerMessage: round((bytes.search_hour_postings ?? 0) / messages, 1), messagesBytesPerMessage: round((bytes.chat_messages ?? 0) / messages, 1) };
}

/** Bytes of the embedded store's search table and messages table, per message (read from LMDB's page counts while the node runs). */
function lmdbDisk(dataDir: string, messages: number): Record<string, number> {
  const env = open({ path: join(dataDir, 'node'), readOnly: true, maxDbs: 16 });
  try {
    const bytes = (name: string) => {
      const s = env.openDB({ name }).getStats() as { pageSize: number; treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number; entryCount: number };
      return { bytes: s.pageSize * (s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages), entries: s.entryCount };
    };
    const [index, stored] = [bytes('search'), bytes('messages')];
    return { searchBytesPerMessage: round(index.bytes / messages, 1), searchKeys: index.entries, messagesBytesPerMessage: round(stored.bytes / messages, 1) };
  } finally {
    void env.close();
  }
}
