import { startPushSink } from '../lib/push-sink.ts';
import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { apiCall, createGroups } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import type { ConnSpec } from '../load/systems.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { mean, sendFigures } from './send-figures.ts';

const CONTENT = 'a benchmark message of a modest, realistic length';
type Mode = 'none' | 'web-push';

/**
 * What Web Push costs the send path (`npm run bench -- sends --push web-push`, or `-- push`):
 * closed-loop WebSocket sends on one node, as `sends`, each sender in a chat with one member who
 * has no connection (100 % of recipients offline), alternating in the same run between the
 * application without push and with Web Push set and a subscription for every recipient at a
 * loopback push service (bench/lib/push-sink.ts). With Web Push each message's push is written
 * to the outbox with it, encrypted for the recipient's keys, signed with the application's VAPID
 * key and POSTed; after each run the scenario waits for every push and says how long after the
 * run's end the last one arrived.
 */
export async function push(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const senders = o.num('senders', o.smoke ? 4 : 64);
  const window = o.num('window', o.smoke ? 4 : 16);
  const rounds = o.num('rounds', o.smoke ? 1 : 4);
  const seconds = o.seconds;
  const rows: Row[] = [];
  const byMode: Record<Mode, { acked: number[]; p99: number[]; cpu: number[] }> = { none: { acked: [], p99: [], cpu: [] }, 'web-push': { acked: [], p99: [], cpu: [] } };
  let lastAfterRunMax = 0;
  let allDelivered = true;
  ctx.progress.plan(1 + rounds * 2, 'chat: starting');
  const sink = await startPushSink(100);
  let target: Target | undefined;
  try {
    target = await startSingle('chat', { users: senders * 2, profileDir: ctx.profileDir, env: { PUSH_ALLOW_LOOPBACK: 'true', NODE_EXTRA_CA_CERTS: sink.caFile } });
    const app = target.app!;
    const node = target.nodes[0]!;
    const [sending, receiving] = [app.users.slice(0, senders), app.users.slice(senders)];
    const rooms = await createGroups(node, sending.map((u, i) => [u, receiving[i]!]));
    const conns: ConnSpec[] = rooms.map((room, i) => ({ system: 'chat', base: node, room, token: sending[i]!.jwt, sender: true }));
    const webPush = `${target.control!}/api/client/apps/${app.appId}/push/web-push`;
    // Devices are registered while Web Push is set, and stay registered while it is off.
    await apiCall('PUT', webPush, app.accessToken, { subject: 'mailto:bench@example.com' });
    for (const u of receiving) await apiCall('POST', `${node}/api/push/devices`, u.jwt, { webPush: sink.subscribe() });
    await apiCall('DELETE', webPush, app.accessToken);
    ctx.progress.step();
    for (let round_ = 0; round_ < rounds; round_++) {
      for (const mode of ['none', 'web-push'] as const) {
        ctx.progress.stage(`chat: round ${round_ + 1}, ${mode === 'none' ? 'no push' : 'Web Push'}`);
        if (mode === 'web-push') await apiCall('PUT', webPush, app.accessToken, { subject: 'mailto:bench@example.com' });
        const pushesBefore = sink.pushes;
        const opened = await ctx.pool.open(conns);
        if (opened.failed) throw new Error(`${opened.failed} connections failed: ${JSON.stringify(opened.errors)}`);
        const before = await processStats(target.pids);
        const start = Date.now() + 300;
        const runEnd = start + (o.warmup + seconds) * 1000;
        const r = await ctx.pool.run({ op: 'sends', start, warmupMs: o.warmup * 1000, durationMs: seconds * 1000, window, content: CONTENT, drainMs: 5000 });
        const after = await processStats(target.pids);
        await ctx.pool.closeAll();
        let delivered: number | null = null;
        let lastAfterRunMs: number | null = null;
        if (mode === 'web-push') {
          // Every acknowledged send (warm-up included) has one recipient with one subscription.
          const waitFrom = Date.now();
          while (sink.pushes - pushesBefore < r.acked && Date.now() - waitFrom < 60_000) await new Promise((resolve) => setTimeout(resolve, 50));
          delivered = sink.pushes - pushesBefore;
          lastAfterRunMs = Math.max(0, sink.lastAt - runEnd);
          lastAfterRunMax = Math.max(lastAfterRunMax, lastAfterRunMs);
          if (delivered < r.acked) allDelivered = false;
          await apiCall('DELETE', webPush, app.accessToken);
        }
        const row: Row = {
          system: 'chat',
          mode: mode === 'none' ? 'no push' : 'Web Push, every recipient offline',
          round: round_ + 1,
          ...sendFigures(r, after.cpuSeconds - before.cpuSeconds, seconds),
          serverCpuCores: round((after.cpuSeconds - before.cpuSeconds) / (o.warmup + seconds), 2),
          sendsAcked: r.acked,
          pushesDelivered: delivered,
          lastPushAfterRunMs: lastAfterRunMs,
        };
        if (r.errors) ctx.log(`round ${round_ + 1}, ${row.mode}: ${r.errors} errors ${JSON.stringify({ ...r.statuses, ...r.refused })}`);
        rows.push(row);
        byMode[mode].acked.push(Number(row.ackedPerSecond));
        byMode[mode].p99.push(Number(row.p99Ms));
        byMode[mode].cpu.push(Number(row.serverCpuUsPerSend));
        ctx.log(`round ${round_ + 1}, ${row.mode}: ${row.ackedPerSecond} acked sends/s, p99 ${row.p99Ms} ms, ${row.serverCpuUsPerSend} µs server CPU per send${mode === 'web-push' ? `; ${delivered} of ${r.acked} pushes, the last ${lastAfterRunMs} ms after the run's end` : ''}`);
        ctx.progress.step();
      }
    }
  } finally {
    await ctx.pool.closeAll();
    await target?.stop();
    await sink.stop();
  }
  const exactRatio = mean(byMode['web-push'].acked) / mean(byMode.none.acked);
  const sendsRatio = round(exactRatio, 3);
  const cpuRatio = round(mean(byMode['web-push'].cpu) / mean(byMode.none.cpu), 3);
  return {
    scenario: 'push',
    parameters: { senders, window, rounds, seconds, workers: ctx.pool.size },
    rows,
    summary: {
      none: { ackedPerSecond: round(mean(byMode.none.acked)), p99Ms: round(mean(byMode.none.p99), 1), cpuUsPerSend: round(mean(byMode.none.cpu), 1) },
      webPush: { ackedPerSecond: round(mean(byMode['web-push'].acked)), p99Ms: round(mean(byMode['web-push'].p99), 1), cpuUsPerSend: round(mean(byMode['web-push'].cpu), 1) },
      ratios: { sends: sendsRatio, cpuPerSend: cpuRatio },
      decryptedPushes: sink.decrypted,
      distinctMessagesDecrypted: sink.distinctDecrypted,
      undecryptablePushes: sink.undecryptable,
      goal: {
        want: '≥ 0.8× sends/s with Web Push, every push delivered within the run plus 2 s',
        got: { sends: sendsRatio, lastPushAfterRunMs: lastAfterRunMax, allDelivered },
        met: exactRatio >= 0.8 && allDelivered && lastAfterRunMax <= 2_000,
      },
    },
    notes: [
      "Closed-loop WebSocket sends, each acknowledged once durable; every chat has its sender and one member with no connection. With Web Push, each send's push is in the outbox before its ack, and is encrypted (aes128gcm) on the node's Web Push thread, signed (VAPID) and POSTed to a loopback push service (node:https, in the bench's process) that answers 201 and decrypts 1 push in 100.",
      'Runs alternate between no push and Web Push in the same run; ratios are of the means.',
      "Last push after the run: from the end of the measured window (warm-up and measure) to the last push the service took; the sends' acks are drained for up to 5 s after it.",
      'Errors: sends the node refused (RATE_LIMITED, from its load shedder, as the event loop fell behind) or left unanswered when the drain ended. With a push for every send, the Web Push thread (about 250 us of CPU a push for RFC 8291\'s encryption, most of it a fresh ECDH key pair) shares the machine\'s two cores with the node\'s event loop, the load generator and the push service.',
    ],
  };
}
