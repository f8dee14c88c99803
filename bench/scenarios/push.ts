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
 * key and POSTed. Pushes of a chat to a device go one at a time, the newest waiting replacing older
 * ones (README, "Push notifications"): after each run the scenario waits until every recipient's
 * newest push is of its chat's newest message, and says how long after the run's end the last
 * of those arrived and how many pushes were made.
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
  const sink = await startPushSink(1);
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
    const endpoints: string[] = [];
    for (const u of receiving) {
      const subscription = sink.subscribe();
      endpoints.push(subscription.endpoint);
      await apiCall('POST', `${node}/api/push/devices`, u.jwt, { webPush: subscription });
    }
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
        let made: number | null = null;
        let upToDate: number | null = null;
        let lastAfterRunMs: number | null = null;
        if (mode === 'web-push') {
          // Each recipient's newest push must be of its chat's newest message (older ones its
          // chat's collapse key replaces may not be made at all: README, "Push notifications").
          const newest = await Promise.all(rooms.map(async (room, i) => ((await apiCall('GET', `${node}/api/messages/getMessages/${room}?size=1`, sending[i]!.jwt)) as { messages: { messageId: string }[] }).messages[0]?.messageId));
          const caughtUp = () => endpoints.map((e) => sink.newest(e)).filter((got, i) => got !== undefined && got.messageId === newest[i]);
          const waitFrom = Date.now();
          while (caughtUp().length < rooms.length && Date.now() - waitFrom < 60_000) await new Promise((resolve) => setTimeout(resolve, 50));
          const got = caughtUp();
          made = sink.pushes - pushesBefore;
          upToDate = got.length;
          lastAfterRunMs = Math.max(0, ...got.map((g) => g!.at - runEnd));
          lastAfterRunMax = Math.max(lastAfterRunMax, lastAfterRunMs);
          if (upToDate < rooms.length) allDelivered = false;
          await apiCall('DELETE', webPush, app.accessToken);
        }
        const row: Row = {
          system: 'chat',
          mode: mode === 'none' ? 'no push' : 'Web Push, every recipient offline',
          round: round_ + 1,
          ...sendFigures(r, after.cpuSeconds - before.cpuSeconds, seconds),
          serverCpuCores: round((after.cpuSeconds - before.cpuSeconds) / (o.warmup + seconds), 2),
          sendsAcked: r.acked,
          pushesMade: made,
          recipientsUpToDate: upToDate === null ? null : `${upToDate} of ${rooms.length}`,
          lastPushAfterRunMs: lastAfterRunMs,
        };
        if (r.errors) ctx.log(`round ${round_ + 1}, ${row.mode}: ${r.errors} errors ${JSON.stringify({ ...r.statuses, ...r.refused })}`);
        rows.push(row);
        byMode[mode].acked.push(Number(row.ackedPerSecond));
        byMode[mode].p99.push(Number(row.p99Ms));
        byMode[mode].cpu.push(Number(row.serverCpuUsPerSend));
        ctx.log(`round ${round_ + 1}, ${row.mode}: ${row.ackedPerSecond} acked sends/s, p99 ${row.p99Ms} ms, ${row.serverCpuUsPerSend} µs server CPU per send${mode === 'web-push' ? `; ${made} pushes for ${r.acked} sends, ${upToDate} of ${rooms.length} recipients shown their chat's newest message, the last ${lastAfterRunMs} ms after the run's end` : ''}`);
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
        want: "≥ 0.8× sends/s with Web Push; every recipient's newest push, of its chat's newest message, within the run plus 2 s",
        got: { sends: sendsRatio, lastPushAfterRunMs: lastAfterRunMax, everyRecipientUpToDate: allDelivered },
        met: exactRatio >= 0.8 && allDelivered && lastAfterRunMax <= 2_000,
      },
    },
    notes: [
      "Closed-loop WebSocket sends, each acknowledged once durable; every chat has its sender and one member with no connection. With Web Push, each send's push is in the outbox before its ack, and is encrypted (aes128gcm) on the node's Web Push thread, signed (VAPID) and POSTed to a loopback push service (node:https, in the bench's process) that answers 201 and decrypts every push (none is of a message pushed before).",
      'Runs alternate between no push and Web Push in the same run; ratios are of the means.',
      "A device gets at most one push a second per chat: messages that come within the second after a push wait, and the newest of them is pushed when it is up, standing for the others (as the push service would replace them, by the chat's collapse key; README, \"Push notifications\"). So a busy chat costs each offline device a push a second, not one per message. Pushes made: how many the push service took; recipients shown their chat's newest: those whose newest push is of their chat's newest message (read from the chat's history after the run).",
      "Last push after the run: from the end of the measured window (warm-up and measure) to the last of the recipients' newest pushes; the sends' acks are drained for up to 5 s after it.",
      "What each send still costs with Web Push: its push event written to the outbox with the message, handed to the push delivery and finished; each push made costs about 250 us of CPU on the Web Push thread (RFC 8291's encryption, most of it a fresh ECDH key pair).",
      'Errors: sends the node refused (RATE_LIMITED, from its load shedder, as the event loop fell behind) or left unanswered when the drain ended.',
    ],
  };
}
