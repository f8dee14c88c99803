import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { WebSocketServer, type WebSocket } from 'ws';
import { LoadPool } from '../../bench/load/pool.ts';
import { PROTOCOLS, type ConnSpec } from '../../bench/load/systems.ts';
import { Progress } from '../../bench/lib/progress.ts';
import type { Target } from '../../bench/lib/targets.ts';
import { fanoutStep, type Context } from '../../bench/scenarios/context.ts';

/**
 * A stand-in for this service that speaks its WebSocket protocol and answers sends in a fixed
 * pattern. `refuse`: of every 10 sends it refuses 3 with RATE_LIMITED and 2 with UNAVAILABLE
 * (error frames naming the send's id), fans out and acks 4, and fans out 1 without ever answering
 * it. `lose`: it acks every send but fans out only 9 of every 10.
 */
async function fakeServer(t: Test): Promise<{ url: string; mode: { now: 'refuse' | 'lose' } }> {
  const mode = { now: 'refuse' as 'refuse' | 'lose' };
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const rooms = new Map<string, Set<WebSocket>>();
  let n = 0;
  wss.on('connection', (ws, request) => {
    const room = new URL(request.url!, 'http://x').searchParams.get('token')!;
    (rooms.get(room) ?? rooms.set(room, new Set()).get(room)!).add(ws);
    ws.send(JSON.stringify({ v: 1, type: 'ready', connectionId: 'c', userId: 'u' }));
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { id: string; chatId: string; content: string };
      const k = n++ % 10;
      const event = JSON.stringify({ v: 1, type: 'message.new', chatId: frame.chatId, content: frame.content });
      const fanOut = () => {
        for (const member of rooms.get(frame.chatId) ?? []) member.send(event);
      };
      if (mode.now === 'lose') {
        if (k < 9) fanOut();
        return ws.send(`{"v":1,"type":"ack","id":"${frame.id}","result":{}}`);
      }
      // Field order differs from the real server's on purpose: the generator must not depend on it.
      if (k < 3) return ws.send(JSON.stringify({ v: 1, type: 'error', code: 'RATE_LIMITED', message: 'slow down', id: frame.id }));
      if (k < 5) return ws.send(JSON.stringify({ v: 1, type: 'error', id: frame.id, code: 'UNAVAILABLE', message: 'busy' }));
      fanOut();
      if (k < 9) ws.send(`{"v":1,"type":"ack","id":"${frame.id}","result":{}}`);
    });
  });
  t.teardown(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  return { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, mode };
}

t.test('chat protocol: an error frame answers the send it names, with its code, whatever the field order', async (t) => {
  const answer = (frame: object) => PROTOCOLS.chat.answer(Buffer.from(JSON.stringify(frame)));
  t.same(answer({ v: 1, type: 'error', id: '42', code: 'RATE_LIMITED', message: 'm' }), { id: 42, refused: 'RATE_LIMITED' });
  t.same(answer({ v: 1, type: 'error', code: 'UNAVAILABLE', message: 'm', id: '7' }), { id: 7, refused: 'UNAVAILABLE' });
  t.same(answer({ v: 1, type: 'error', code: 'MALFORMED_FRAME', message: 'm' }), { id: -1, refused: 'MALFORMED_FRAME' }, 'no id: the generator settles the oldest send in flight');
  t.same(PROTOCOLS.chat.answer(Buffer.from('{"v":1,"type":"ack","id":"9","result":{}}')), { id: 9 });
  t.equal(PROTOCOLS.chat.answer(Buffer.from('{"v":1,"type":"message.new","content":"t1"}')), undefined);
  t.same(PROTOCOLS.uws.answer(Buffer.from('{"ack":5}')), { id: 5 }, 'the peers only ack');
  t.same(PROTOCOLS.socketio.answer(Buffer.from('435[]')), { id: 5 });
});

t.test('a fanout step counts refusals by code, their latency and unanswered sends; refused sends are not expected at the members, accepted ones are', async (t) => {
  const { url, mode } = await fakeServer(t);
  const pool = await LoadPool.start(1);
  t.teardown(() => pool.stop());
  const rooms = 2;
  const members = 3;
  // The fake server takes the room from the token, so each room's members share one.
  const conns: ConnSpec[] = Array.from({ length: rooms * members }, (_, i) => ({ system: 'chat', base: url, room: `room-${Math.floor(i / members)}`, token: `room-${Math.floor(i / members)}`, sender: i % members === 0 }));
  const opened = await pool.open(conns);
  t.equal(opened.opened, conns.length, 'every connection joined');
  const lines: string[] = [];
  const ctx: Context = { pool, progress: new Progress(false), systems: ['chat'], log: (line) => lines.push(line) };
  const target: Target = { system: 'chat', nodes: [url], pids: [process.pid], stop: async () => undefined };
  const plan = { rooms, members, warmupMs: 300, durationMs: 2000, p99LimitMs: 250, drainMs: 1000 };
  const { row, ok } = await fanoutStep(ctx, target, plan, 100);

  const sent = Number(row.sentPerSecond) * 2;
  t.ok(sent >= 150, `about 200 measured sends (${sent})`);
  const refused = Number(row.refused);
  t.ok(refused >= sent * 0.4 && refused <= sent * 0.6, `half refused: ${refused} of ${sent}`);
  t.match(String(row.refusedByCode), /^RATE_LIMITED \d+, UNAVAILABLE \d+$/, `by code, most first: ${row.refusedByCode}`);
  t.ok(Number(row.refusalP99Ms) > 0 && Number(row.refusalP99Ms) < 250, `time to refusal measured: p99 ${row.refusalP99Ms} ms`);
  const unanswered = Number(row.unanswered);
  t.ok(unanswered >= sent * 0.05 && unanswered <= sent * 0.15, `a tenth never answered: ${unanswered}`);
  t.equal(row.deliveredPct, 100, 'every accepted send reached every member; the refused ones were not expected');
  t.ok(Math.abs(Number(row.ackedPerSecond) * 2 - (sent - refused - unanswered)) <= 2, `acks counted apart from refusals: ${row.ackedPerSecond}/s`);
  t.equal(ok, false, 'a step that refuses or leaves sends unanswered does not pass');
  t.equal(row.ok, false);
  t.ok(Number(row.sendErrors) >= refused, 'every refusal counted as a send error, warmup included');
  t.ok(typeof row.nodeCpuUsPerMessage === 'number', 'CPU per acknowledged message');

  mode.now = 'lose';
  const lossy = await fanoutStep(ctx, target, plan, 100);
  await pool.closeAll();
  t.match(lossy.row, { refused: 0, refusedByCode: null, refusalP99Ms: null, unanswered: 0 }, 'everything acked');
  t.ok(Number(lossy.row.deliveredPct) >= 85 && Number(lossy.row.deliveredPct) <= 95, `a tenth of the accepted sends never delivered: ${lossy.row.deliveredPct}%`);
  t.equal(lossy.ok, false, 'an accepted send not delivered fails the step');
});
