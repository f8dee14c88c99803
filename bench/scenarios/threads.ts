import { percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import { inParallel, postJson as post, type ChatUser } from '../lib/provision.ts';
import { clusterServices } from '../lib/services.ts';
import { startSingle, startThree, type Target } from '../lib/targets.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/** The goal: the inbox of a user following this many threads answers at p99 under GOAL_P99_MS. */
const FOLLOWED = 500;
const GOAL_P99_MS = 20;
/** Threads per chat: the followed threads are spread over chats of the user alone. */
const PER_CHAT = 10;

/** `count` threads `user` follows: a message of its own and its reply in it (a replier follows), PER_CHAT a chat. */
async function follow(node: string, user: ChatUser, count: number, step: () => void): Promise<void> {
  const chats = Math.ceil(count / PER_CHAT);
  await inParallel(chats, 8, async (c) => {
    const chat = await post(`${node}/api/chats`, { type: 'group', name: `threads ${c}`, memberIds: [] }, user.jwt);
    if (chat.status !== 201) throw new Error(`creating chat ${c}: ${chat.status} ${JSON.stringify(chat.body)}`);
    for (let i = 0; i < PER_CHAT && c * PER_CHAT + i < count; i++) {
      const parent = await post(`${node}/api/messages/${chat.body.chatId}`, { content: `topic ${c}.${i}` }, user.jwt);
      if (parent.status !== 201) throw new Error(`sending to chat ${c}: ${parent.status} ${JSON.stringify(parent.body)}`);
      const reply = await post(`${node}/api/messages/${chat.body.chatId}`, { content: 'reply', parentId: parent.body.message.messageId }, user.jwt);
      if (reply.status !== 201) throw new Error(`replying in chat ${c}: ${reply.status} ${JSON.stringify(reply.body)}`);
      step();
    }
  }, () => undefined);
}

/**
 * `GET /api/users/me/threads?size=20` (the threads inbox) for a user following FOLLOWED threads
 * against a user following one, on the embedded store (one node) and on Cassandra (three nodes):
 * p50 and p99, closed loop, the same concurrency for both, one after the other in the same run.
 */
export async function threads(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const followed = o.num('threads', o.smoke ? 20 : FOLLOWED);
  const stores = o.list('stores') ?? (o.smoke ? ['embedded'] : ['embedded', 'cassandra']);
  const concurrency = o.num('concurrency', o.smoke ? 2 : 4);
  const size = o.num('size', 20);
  const rows: Row[] = [];
  const notes = [
    `Each followed thread is a message of the user's own with one reply of its own (a replier follows its thread), ${PER_CHAT} threads to a chat of the user alone; the inbox lists the newest ${size}.`,
    'Closed loop: each worker keeps its share of the concurrency busy; the two users are measured one after the other against the same running service.',
  ];
  if (!ctx.systems.includes('chat')) return { parameters: { followed }, rows, summary: {}, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(stores.length * (1 + followed + 1 + 2), 'chat: starting');
  for (const store of stores) {
    let target: Target | undefined;
    let stopServices = () => {};
    try {
      if (store === 'cassandra') {
        const started = await clusterServices(ctx);
        stopServices = started.stop;
        target = await startThree('chat', started.services, { users: 2, profileDir: ctx.profileDir });
      } else target = await startSingle('chat', { users: 2, profileDir: ctx.profileDir });
      ctx.progress.step();
      const node = target.nodes[0]!;
      const [one, many] = target.app!.users as [ChatUser, ChatUser];
      ctx.progress.stage(`chat (${store}): one user follows 1 thread, another ${followed}`);
      await follow(node, one, 1, () => undefined);
      await follow(node, many, followed, () => ctx.progress.step());
      const check = await fetch(`${node}/api/users/me/threads?size=${size}`, { headers: { authorization: `Bearer ${many.jwt}` } });
      const inbox = (await check.json()) as { threads: unknown[]; nextCursor?: string };
      if (check.status !== 200 || inbox.threads.length !== Math.min(size, followed) || (followed > size) !== (inbox.nextCursor !== undefined)) {
        throw new Error(`the inbox of the user following ${followed} threads is not what was made: ${check.status} ${JSON.stringify(inbox).slice(0, 300)}`);
      }
      ctx.progress.step();
      const measured: Record<string, Row> = {};
      for (const [who, user, count] of [['one', one, 1], ['many', many, followed]] as const) {
        ctx.progress.stage(`chat (${store}): the inbox of a user following ${count}`);
        const requests = target.nodes.map((origin) => ({ origin, method: 'GET' as const, path: `/api/users/me/threads?size=${size}`, headers: { authorization: `Bearer ${user.jwt}` } }));
        const share = Math.max(1, Math.round(concurrency / ctx.pool.size));
        const r = await ctx.pool.run({ op: 'http', start: Date.now() + 200, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, requests, concurrency: share });
        const p = percentiles(r.histogram);
        const row: Row = { system: 'chat', store, followed: count, size, requestsPerSecond: round(r.measuredDelivered / o.seconds), p50Ms: p.p50Ms, p99Ms: p.p99Ms, errors: r.errors };
        if (r.errors) ctx.log(`${store} ${who}: ${r.errors} errors ${JSON.stringify(r.statuses)}`);
        measured[who] = row;
        rows.push(row);
        ctx.progress.step();
      }
      measured.many!.p50VsOne = round(Number(measured.many!.p50Ms) / Number(measured.one!.p50Ms), 3);
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
      stopServices();
    }
  }
  const summary: Record<string, unknown> = {};
  for (const r of rows.filter((r) => r.followed === followed)) {
    summary[String(r.store)] = { p50Ms: r.p50Ms, p99Ms: r.p99Ms, p50VsOne: r.p50VsOne, goal: { want: `p99 < ${GOAL_P99_MS} ms`, met: Number(r.p99Ms) < GOAL_P99_MS } };
  }
  return { parameters: { followed, size, stores, concurrency, seconds: o.seconds, warmup: o.warmup, workers: ctx.pool.size }, rows, summary, notes };
}
