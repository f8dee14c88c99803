import { percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import { inParallel, postJson as post, type ChatUser } from '../lib/provision.ts';
import { clusterServices } from '../lib/services.ts';
import { startSingle, startThree, type Target } from '../lib/targets.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';

/** The default USER_CHATS_MAX (common/config/schema.ts): the cap a user is filled to. */
const DEFAULT_CAP = 1000;
/** The goal: listing for a user at the cap costs within this factor of a user with one chat. */
const WITHIN = 2;

/** `count` groups of `user` alone, each with one message (so each summary has a last message to read). */
async function fill(node: string, user: ChatUser, count: number, done: () => void): Promise<void> {
  await inParallel(count, 16, async (i) => {
    const chat = await post(`${node}/api/chats`, { type: 'group', name: `list ${i}`, memberIds: [] }, user.jwt);
    if (chat.status !== 201) throw new Error(`creating chat ${i}: ${chat.status} ${JSON.stringify(chat.body)}`);
    const sent = await post(`${node}/api/messages/${chat.body.chatId}`, { content: `message in chat ${i}` }, user.jwt);
    if (sent.status !== 201) throw new Error(`sending to chat ${i}: ${sent.status} ${JSON.stringify(sent.body)}`);
  }, done);
}

/**
 * `GET /api/chats?size=N` for a user at the chat cap against a user with one chat, on the embedded
 * store (one node) and on Cassandra (three nodes). Both users' chats are groups with one message
 * each; the user at the cap is shown to be there (one more chat is refused). Closed loop, the same
 * concurrency for both users, measured one after the other in the same run.
 */
export async function chatlist(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const cap = o.num('chats', o.smoke ? 100 : DEFAULT_CAP);
  const sizes = (o.list('sizes') ?? ['1', '20']).map(Number);
  const stores = o.list('stores') ?? (o.smoke ? ['embedded'] : ['embedded', 'cassandra']);
  const concurrency = o.num('concurrency', o.smoke ? 4 : 16);
  const rows: Row[] = [];
  const notes = [
    `Each user's chats are groups of that user alone with one message each; the full user has ${cap} (the cap${cap === DEFAULT_CAP ? ', USER_CHATS_MAX\'s default' : ''}: one more is refused with CHAT_LIMIT_REACHED, checked before measuring).`,
    'Closed loop: each worker keeps its share of the concurrency busy; the two users are measured one after the other against the same running service.',
  ];
  if (!ctx.systems.includes('chat')) return { parameters: { cap }, rows, summary: {}, notes: [...notes, 'skipped: --systems does not include chat'] };
  ctx.progress.plan(stores.length * (2 + cap + sizes.length * 2), 'chat: starting');
  const env: Record<string, string> = cap === DEFAULT_CAP ? {} : { USER_CHATS_MAX: String(cap) };
  for (const store of stores) {
    let target: Target | undefined;
    let stopServices = () => {};
    try {
      if (store === 'cassandra') {
        const started = await clusterServices(ctx);
        stopServices = started.stop;
        target = await startThree('chat', started.services, { users: 2, env, profileDir: ctx.profileDir });
      } else target = await startSingle('chat', { users: 2, env, profileDir: ctx.profileDir });
      ctx.progress.step();
      const node = target.nodes[0]!;
      const [one, full] = target.app!.users as [ChatUser, ChatUser];
      ctx.progress.stage(`chat (${store}): one user into 1 chat, another into ${cap}`);
      await fill(node, one, 1, () => undefined);
      await fill(node, full, cap, () => ctx.progress.step());
      const over = await post(`${node}/api/chats`, { type: 'group', name: 'one too many', memberIds: [] }, full.jwt);
      if (over.body.code !== 'CHAT_LIMIT_REACHED') throw new Error(`the full user is not at the cap: one more chat got ${over.status} ${JSON.stringify(over.body)}`);
      ctx.progress.step();
      for (const size of sizes) {
        const measured: Record<string, Row> = {};
        for (const [who, user, chats] of [['one', one, 1], ['full', full, cap]] as const) {
          ctx.progress.stage(`chat (${store}): size=${size}, user with ${chats} chat(s)`);
          const requests = target.nodes.map((origin) => ({ origin, method: 'GET' as const, path: `/api/chats?size=${size}`, headers: { authorization: `Bearer ${user.jwt}` } }));
          const share = Math.max(1, Math.round(concurrency / ctx.pool.size));
          const r = await ctx.pool.run({ op: 'http', start: Date.now() + 200, warmupMs: o.warmup * 1000, durationMs: o.seconds * 1000, requests, concurrency: share });
          const p = percentiles(r.histogram);
          const row: Row = { system: 'chat', store, size, userChats: chats, requestsPerSecond: round(r.measuredDelivered / o.seconds), p50Ms: p.p50Ms, p99Ms: p.p99Ms, errors: r.errors };
          if (r.errors) ctx.log(`${store} size=${size} ${who}: ${r.errors} errors ${JSON.stringify(r.statuses)}`);
          measured[who] = row;
          rows.push(row);
          ctx.progress.step();
        }
        const [a, b] = [measured.one!, measured.full!];
        b.p50VsOneChat = round(Number(b.p50Ms) / Number(a.p50Ms), 3);
        b.throughputVsOneChat = round(Number(b.requestsPerSecond) / Number(a.requestsPerSecond), 3);
      }
    } finally {
      await ctx.pool.closeAll();
      await target?.stop();
      stopServices();
    }
  }
  const summary: Record<string, unknown> = {};
  for (const r of rows.filter((r) => r.userChats === cap && r.size === 1)) {
    // The cost ratio: the worse of latency (higher) and throughput (lower) against the one-chat user.
    const cost = Math.max(Number(r.p50VsOneChat), 1 / Number(r.throughputVsOneChat));
    summary[String(r.store)] = { p50Ratio: r.p50VsOneChat, throughputRatio: r.throughputVsOneChat, costRatio: round(cost, 3), goal: { want: `≤ ${WITHIN}`, met: cost <= WITHIN } };
  }
  return { parameters: { cap, sizes, stores, concurrency, seconds: o.seconds, warmup: o.warmup, workers: ctx.pool.size }, rows, summary, notes };
}
