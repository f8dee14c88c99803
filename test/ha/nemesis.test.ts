import t from 'tap';
import { check, VIOLATIONS } from '../helpers/nemesis/checker.ts';
import { Member } from '../helpers/nemesis/clients.ts';
import { findTopology } from '../helpers/nemesis/harness.ts';
import { markdown } from '../helpers/nemesis/report.ts';
import { runNemesis, timingFor } from '../helpers/nemesis/run.ts';

/**
 * Nothing acknowledged is lost (issue: "a production cluster ... proves nothing acknowledged is
 * lost"), Jepsen-style and bounded in time: on the HA topology (three Cassandra nodes, RF 3; a
 * Redis Cluster) with the control service and three chat nodes, senders on every node send into
 * a few busy chats at a steady rate, each send retried with its idempotency key on an unknown
 * outcome, while members follow the chats over WebSocket on every node. Seven phases each inject
 * ONE fault under that load, hold it, heal it and let the cluster recover (test/helpers/nemesis):
 * a Cassandra node killed, the Redis master of busy chats' channels killed, a chat node cut from
 * Redis, a chat node isolated, the owner of busy chats paused past its hold, every node restarted
 * in turn, a Cassandra node paused. After each, the store is read back (history from every node,
 * and the rows at ALL) and every phase must show 0 acknowledged sends lost, 0 duplicated, 0 seqs
 * reused, sends in real-time order, and every member holding every stored message, each socket
 * sent each seq at most once and in order. The table goes to artifacts/nemesis.{json,md}; `npm run nemesis` is the
 * long form (bin/nemesis.ts).
 */

t.test('the checker finds each kind of violation it reports', async (t) => {
  const chatId = '00000000-0000-4000-8000-000000000001';
  const row = (seq: number, id = `m${seq}`, content = `k${seq}`) => ({ seq, messageId: id, content });
  const stored = [1, 2, 3, 5, 6].map((seq) => row(seq));
  const send = (key: string, firstAt: number, ack: { seq: number; at: number }) => ({
    key, chatId, content: key, sender: 'a', senderId: 'a', via: 'rest' as const, firstAt, attempts: [], ack: { seq: ack.seq, messageId: `m${ack.seq}` }, ackAt: ack.at,
  });
  const member = new Member({ user: { name: 'm', userId: 'u', jwt: '' }, chats: [chatId], nodes: () => [] });
  for (const seq of [1, 2, 3, 9]) member.held.get(chatId)!.set(seq, { messageId: `m${seq}`, via: 'live' });
  const delivered = (seqs: number[], replay: boolean) => ({ [chatId]: seqs.map((seq) => ({ seq, messageId: `m${seq}`, content: '', replay, at: 0 })) });
  member.sessions.push(
    { node: 'a', openedAt: 0, resumeFrom: { [chatId]: 0 }, gaps: [], deliveries: delivered([2, 1, 3, 3], false) },
    { node: 'b', openedAt: 0, resumeFrom: { [chatId]: 2 }, gaps: [], deliveries: delivered([2, 3, 6], true) },
  );
  const v = check({
    // Node a: seq 6 twice (two messages), k1 again at seq 7; node b: the messages as sent.
    chats: [{ chatId, histories: [{ node: 'a', messages: [...stored, row(6, 'm6b', 'x6'), row(7, 'm7', 'k1')] }, { node: 'b', messages: stored }] }],
    sends: [send('k1', 0, { seq: 1, at: 10 }), { ...send('k2', 20, { seq: 2, at: 30 }), attempts: [{ at: 20, node: 'node-b', outcome: 'unknown' as const, detail: 'no answer within 5 ms', ms: 9 }] }, send('k5', 35, { seq: 5, at: 50 }), send('k3', 55, { seq: 3, at: 60 }), send('k4', 62, { seq: 4, at: 70 }), send('k6', 5, { seq: 6, at: 80 })],
    members: [member],
    loadFrom: 0,
    loadTo: 100,
    healedAt: 45,
  });
  t.equal(v.lost, 1, 'an acknowledged send not stored (k4)');
  t.equal(v.duplicated, 1, 'a send stored twice (k1 at seqs 1 and 7)');
  t.equal(v.seqsReused, 1, 'a seq with two messages (6)');
  t.equal(v.historyDisorder, 1, 'history not strictly increasing (6 after 6)');
  t.equal(v.historiesDiffer, 1, 'two nodes with different histories');
  t.equal(v.orderViolations, 1, 'a send first tried after seq 5 was acknowledged, stored at seq 3 (k3)');
  t.equal(v.ackMismatches, 0, 'acknowledged seqs and ids match the store');
  t.equal(v.membersMissed, 4, 'stored seqs 5, 6 (twice) and 7 the member lacks');
  t.equal(v.membersPhantoms, 1, 'a seq the member holds that is not stored (9)');
  t.equal(v.membersOutOfOrder, 1, 'a socket sent seq 1 after 2');
  t.equal(v.membersDuplicates, 1, 'a socket sent seq 3 twice');
  t.equal(v.membersRedelivered, 1, 'a socket resumed from 2 sent seq 2');
  t.equal(v.membersReplayHoles, 1, 'a replay from 2 to 6 that skipped stored seq 5');
  t.equal(v.recoverMs, 5, 'first acknowledgement 5 ms after the heal');
  t.equal(v.longestStallMs, 20, 'longest time without an acknowledgement: 20 ms');
  t.equal(v.worstChatStall, 'chat 00000000 from 0.0 s to 0.0 s of the load; 1 attempts across it: k2 rest to node-b at 0.0 s: unknown (no answer within 5 ms) after 9 ms', 'the worst stall is placed, with the attempt under way across it');
});

const topology = await findTopology((line) => t.comment(line));
if (!topology) t.skip('no topology to run on (scripts/services.sh start --topology ha, or start)', () => undefined);
else {
  // About 20 s of load a phase (4 warm, 8 held, 8 recovering), 30 sends/s over 9 senders.
  const seconds = Number(process.env.NEMESIS_PHASE_SECONDS ?? 20);
  const rate = Number(process.env.NEMESIS_RATE ?? 30);
  t.setTimeout(Number(process.env.NEMESIS_TIMEOUT_SECONDS ?? 720) * 1000);
  const only = process.env.NEMESIS_PHASES?.split(',').map((s) => s.trim()).filter(Boolean);
  const report = await runNemesis({
    topology,
    t,
    timing: timingFor(seconds, rate),
    ...(only ? { only } : {}),
    log: (line) => t.comment(line),
  });
  t.comment(markdown(report).split('\n## Phases')[0]!);
  for (const phase of report.phases) {
    if (phase.skipped) {
      t.skip(`phase ${phase.id}: ${phase.title}: ${phase.skipped}`, () => undefined);
      continue;
    }
    t.test(`phase ${phase.id}: ${phase.title}`, async (t) => {
      if (phase.target) t.comment(phase.target);
      for (const note of phase.notes) t.comment(note);
      t.notOk(phase.error, 'the fault was injected and healed');
      const v = phase.verdict!;
      t.ok(v.acknowledged > 0, `sends were acknowledged (${v.acknowledged} of ${v.attempted}; ${v.unknownOutcomes} unknown outcomes retried, ${v.unresolved} unresolved)`);
      for (const kind of VIOLATIONS) t.equal(v[kind], 0, `${kind}: 0${v.examples[kind] ? ` (${v.examples[kind]!.join('; ')})` : ''}`);
      // Where the bound was missed, and the fault's timeline, in the failure's own diagnostics.
      const timeline = phase.timeline && `fault at ${phase.timeline.faultAt.toFixed(1)} s, heal at ${phase.timeline.healAt.toFixed(1)} s, healed at ${phase.timeline.healedAt.toFixed(1)} s of the load`;
      for (const b of phase.bounds ?? []) t.ok(b.value < b.limit, `${b.name}: ${b.value} ms < ${b.limit} ms`, { where: b.detail, timeline });
    });
  }
}
