import { Pool } from 'undici';
import { encodeHistogram, newHistogram, type Histogram } from '../lib/histogram.ts';
import { now } from './clock.ts';
import { RawWs } from './raw-ws.ts';
import { PROTOCOLS, sentAt, type Answer, type ConnSpec, type Protocol } from './systems.ts';
import type { Command, HttpRequest, WorkerResult } from './commands.ts';

/**
 * One load-generator process, driven by its parent (pool.ts) over IPC. It holds its share of the
 * connections and runs the phase it is told to, then answers with counts, an encoded latency
 * histogram and its own CPU time, so every result says how busy the generator was.
 */

interface Conn {
  spec: ConnSpec;
  protocol: Protocol;
  ws: RawWs;
  /** Sends not answered yet: id → time sent (sends) or intended send time (fanout). */
  inflight: Map<number, number>;
}

const conns: Conn[] = [];
let onDelivery: (payload: Buffer, at: number) => void = () => undefined;
let onAnswer: (conn: Conn, answer: Answer, at: number, payload: Buffer) => void = () => undefined;
let nextId = 1;

const reply = (message: unknown) => process.send!(message);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

function openOne(spec: ConnSpec): Promise<string | undefined> {
  const protocol = PROTOCOLS[spec.system];
  return new Promise((resolve) => {
    let settled = false;
    const done = (error?: string) => {
      if (settled) return;
      settled = true;
      resolve(error);
    };
    const conn: Conn = {
      spec,
      protocol,
      inflight: new Map(),
      ws: new RawWs(protocol.url(spec), {
        localAddress: spec.localAddress,
        onOpen: (error) => {
          if (error) done(error);
        },
        onClose: (reason) => done(`${reason} while joining`),
        onFrame: (payload) => {
          const at = now();
          if (protocol.isDelivery(payload)) return onDelivery(payload, at);
          const answered = protocol.answer(payload);
          if (answered !== undefined) return onAnswer(conn, answered, at, payload);
          const required = protocol.reply?.(payload) ?? (settled ? undefined : protocol.onOpenSend?.(spec, payload));
          if (required) conn.ws.send(required);
          if (!settled && protocol.joined(payload)) {
            conns.push(conn);
            done();
          }
        },
      }),
    };
  });
}

async function open(specs: ConnSpec[], concurrency: number): Promise<void> {
  const errors = new Map<string, number>();
  let opened = 0;
  let next = 0;
  const startedAt = now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, specs.length) }, async () => {
      while (next < specs.length) {
        const error = await openOne(specs[next++]!);
        if (error) errors.set(error, (errors.get(error) ?? 0) + 1);
        else opened++;
      }
    }),
  );
  reply({ op: 'opened', opened, failed: specs.length - opened, errors: Object.fromEntries(errors), ms: now() - startedAt });
}

/** CPU seconds this process used since `from`. */
const cpuSince = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
};

type Counts = Omit<WorkerResult, 'op' | 'histogram' | 'cpuSeconds' | 'open' | 'measuredAcked' | 'refused' | 'refusalHistogram' | 'unanswered' | 'sendLagHistogram'>;
type Answers = Pick<WorkerResult, 'measuredAcked' | 'refused' | 'unanswered'> & { refusals: Histogram; sendLag?: Histogram };

function result(fields: Counts, histogram: Histogram, cpu: NodeJS.CpuUsage, answers?: Answers): WorkerResult {
  return {
    op: 'result',
    ...fields,
    measuredAcked: answers?.measuredAcked ?? 0,
    refused: answers?.refused ?? {},
    refusalHistogram: answers ? encodeHistogram(answers.refusals) : '',
    unanswered: answers?.unanswered ?? 0,
    sendLagHistogram: answers?.sendLag ? encodeHistogram(answers.sendLag) : '',
    histogram: encodeHistogram(histogram),
    cpuSeconds: cpuSince(cpu),
    open: conns.filter((c) => c.ws.isOpen).length,
  };
}

/**
 * The send an answer is for, taken out of its connection's in-flight sends: by its id, or, for an
 * error frame that names none, the oldest in flight. Undefined for an answer to no send of this run.
 */
function settle(c: Conn, answer: Answer): number | undefined {
  let id = answer.id;
  if (id < 0 && answer.refused !== undefined) {
    const first = c.inflight.keys().next();
    if (first.done) return undefined;
    id = first.value;
  }
  const t = c.inflight.get(id);
  if (t !== undefined) c.inflight.delete(id);
  return t;
}

/**
 * Open loop: each sender sends at its rate from `start` until the end, whatever the answers; each
 * message carries its intended send time, so latency counts from when it should have gone out
 * (no coordinated omission: a stalled generator or server shows as latency, not as fewer sends).
 */
async function fanout(cmd: Extract<Command, { op: 'fanout' }>): Promise<void> {
  const measureFrom = cmd.start + cmd.warmupMs;
  const end = measureFrom + cmd.durationMs;
  const hist = newHistogram();
  const refusals = newHistogram();
  const sendLag = newHistogram();
  const refused: Record<string, number> = {};
  let sent = 0, measuredSent = 0, delivered = 0, measuredDelivered = 0, acked = 0, measuredAcked = 0, errors = 0, pending = 0, lostOnClosed = 0;
  let lastDelivery = 0;
  let lastAnswer = 0;
  const measured = (t: number) => t >= measureFrom && t < end;
  // Answers to an earlier run's sends find nothing here and are ignored.
  for (const c of conns) c.inflight.clear();
  onDelivery = (payload, at) => {
    delivered++;
    lastDelivery = at;
    const t = sentAt(payload);
    if (t === undefined || t < measureFrom || t >= end) return;
    measuredDelivered++;
    hist.recordValue(Math.max(1, Math.round((at - t) * 1000)));
  };
  onAnswer = (c, answer, at) => {
    const t = settle(c, answer);
    if (t === undefined) return;
    pending--;
    lastAnswer = at;
    if (answer.refused === undefined) {
      acked++;
      if (measured(t)) measuredAcked++;
      return;
    }
    errors++;
    if (!measured(t)) return;
    refused[answer.refused] = (refused[answer.refused] ?? 0) + 1;
    refusals.recordValue(Math.max(1, Math.round((at - t) * 1000)));
  };
  const interval = 1000 / cmd.ratePerSender;
  const senders = conns.filter((c) => c.spec.sender).map((c) => ({ c, next: cmd.start + Math.random() * interval }));
  await sleep(cmd.start - now());
  let cpu: NodeJS.CpuUsage | undefined;
  // The warmup is sent by the same loop: the measured window starts with the server already busy.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const t = now();
      if (!cpu && t >= measureFrom) cpu = process.cpuUsage();
      for (const s of senders) {
        while (s.next <= t && s.next < end) {
          const id = nextId++;
          // A send on a closed socket goes nowhere: it is not waited for, and counts as unanswered.
          if (s.c.ws.isOpen) {
            s.c.inflight.set(id, s.next);
            pending++;
          } else if (s.next >= measureFrom) lostOnClosed++;
          s.c.ws.send(s.c.protocol.send(s.c.spec.room, id, cmd.contents ? `t${s.next.toFixed(3)} ${cmd.contents[id % cmd.contents.length]}` : `t${s.next.toFixed(3)}`));
          sent++;
          if (measured(s.next)) {
            measuredSent++;
            sendLag.recordValue(Math.max(1, Math.round((t - s.next) * 1000)));
          }
          s.next += interval;
        }
      }
      if (t >= end) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  // Drain: until every send is answered and nothing has arrived for a while, or the bound.
  const drainEnd = end + cmd.drainMs;
  while (now() < drainEnd && (pending > 0 || now() - Math.max(lastDelivery, lastAnswer, end) < cmd.quietMs)) await sleep(20);
  let unanswered = lostOnClosed;
  for (const c of conns) {
    for (const t of c.inflight.values()) if (measured(t)) unanswered++;
    c.inflight.clear();
  }
  onAnswer = () => undefined;
  reply(result({ sent, measuredSent, delivered, measuredDelivered, acked, errors, ids: [] }, hist, cpu ?? process.cpuUsage(), { measuredAcked, refused, refusals, unanswered, sendLag }));
}

/** Closed loop: each sender keeps `window` sends in flight; the ack latency is measured. */
async function sends(cmd: Extract<Command, { op: 'sends' }>): Promise<void> {
  const measureFrom = cmd.start + cmd.warmupMs;
  const end = measureFrom + cmd.durationMs;
  const hist = newHistogram();
  let sent = 0, measuredSent = 0, acked = 0, errors = 0, done = 0;
  const ids: string[] = [];
  const senders = conns.filter((c) => c.spec.sender);
  const limit = cmd.perSender ?? Infinity;
  const count = new Map<Conn, number>();
  const sendOne = (c: Conn) => {
    const n = count.get(c) ?? 0;
    if (now() >= end || n >= limit) return;
    count.set(c, n + 1);
    const id = nextId++;
    const t = now();
    c.inflight.set(id, t);
    c.ws.send(c.protocol.send(c.spec.room, id, cmd.contents ? cmd.contents[id % cmd.contents.length]! : cmd.content));
    sent++;
    if (t >= measureFrom) measuredSent++;
  };
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  onDelivery = () => undefined;
  const mark = Buffer.from('"messageId":"');
  const refused: Record<string, number> = {};
  const refusals = newHistogram();
  onAnswer = (c, answer, at, payload) => {
    const t = settle(c, answer);
    if (answer.refused !== undefined) {
      errors++;
      if (t !== undefined && t >= measureFrom && t < end) {
        refused[answer.refused] = (refused[answer.refused] ?? 0) + 1;
        refusals.recordValue(Math.max(1, Math.round((at - t) * 1000)));
      }
    } else if (t !== undefined) {
      acked++;
      // The ack carries the stored message: every n-th id is kept (history cursors).
      if (cmd.collectIdsEvery && acked % cmd.collectIdsEvery === 0) {
        const i = payload.indexOf(mark);
        if (i >= 0) ids.push(payload.toString('latin1', i + mark.length, i + mark.length + 36));
      }
      if (t >= measureFrom && t < end) {
        done++;
        hist.recordValue(Math.max(1, Math.round((at - t) * 1000)));
      }
    }
    sendOne(c);
    if (senders.every((s) => s.inflight.size === 0)) finish();
  };
  await sleep(cmd.start - now());
  const cpu = process.cpuUsage();
  for (const c of senders) for (let i = 0; i < cmd.window; i++) sendOne(c);
  if (senders.length === 0) finish();
  await Promise.race([finished, sleep(end - now() + cmd.drainMs)]);
  let unanswered = 0;
  for (const c of senders) {
    for (const t of c.inflight.values()) if (t >= measureFrom && t < end) unanswered++;
    c.inflight.clear();
  }
  onAnswer = () => undefined;
  reply(result({ sent, measuredSent, delivered: 0, measuredDelivered: done, acked, errors, ids }, hist, cpu, { measuredAcked: done, refused, refusals, unanswered }));
}

/** Closed loop over HTTP: `concurrency` requests in flight, taken round-robin from the list. */
async function http(cmd: Extract<Command, { op: 'http' }>): Promise<void> {
  const measureFrom = cmd.start + cmd.warmupMs;
  const end = measureFrom + cmd.durationMs;
  const hist = newHistogram();
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string) => {
    let pool = pools.get(origin);
    if (!pool) pools.set(origin, (pool = new Pool(origin, { connections: cmd.concurrency, pipelining: 1 })));
    return pool;
  };
  let sent = 0, measuredSent = 0, ok = 0, measuredOk = 0, errors = 0, next = 0;
  const statuses: Record<string, number> = {};
  const one = async (request: HttpRequest) => {
    const t = now();
    sent++;
    if (t >= measureFrom) measuredSent++;
    try {
      const res = await poolFor(request.origin).request({ method: request.method, path: request.path, headers: request.headers, body: request.body });
      await res.body.dump();
      const good = res.statusCode >= 200 && res.statusCode < 300;
      if (!good) statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      const at = now();
      if (good) ok++;
      else errors++;
      if (good && t >= measureFrom && t < end) {
        measuredOk++;
        hist.recordValue(Math.max(1, Math.round((at - t) * 1000)));
      }
    } catch (error) {
      errors++;
      statuses[(error as Error).message] = (statuses[(error as Error).message] ?? 0) + 1;
    }
  };
  await sleep(cmd.start - now());
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: cmd.concurrency }, async () => {
      while (now() < end) await one(cmd.requests[next++ % cmd.requests.length]!);
    }),
  );
  await Promise.all([...pools.values()].map((p) => p.close()));
  reply(result({ sent, measuredSent, delivered: 0, measuredDelivered: measuredOk, acked: ok, errors, ids: [], statuses }, hist, cpu));
}

process.on('message', (cmd: Command) => {
  const run = async () => {
    if (cmd.op === 'open') return open(cmd.conns, cmd.concurrency);
    if (cmd.op === 'fanout') return fanout(cmd);
    if (cmd.op === 'sends') return sends(cmd);
    if (cmd.op === 'http') return http(cmd);
    if (cmd.op === 'close') {
      for (const c of conns.splice(0)) c.ws.close();
      reply({ op: 'closed' });
    }
  };
  run().catch((error: unknown) => reply({ op: 'failed', error: String((error as Error)?.stack ?? error) }));
});
// The parent gone, nothing is left to do.
process.on('disconnect', () => process.exit(0));
reply({ op: 'ready', pid: process.pid });
