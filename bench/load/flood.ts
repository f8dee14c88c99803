import { readFileSync } from 'node:fs';
import { now } from './clock.ts';
import { RawWs } from './raw-ws.ts';

/**
 * The flooding tenant of the `flood` scenario, as a process of its own: one WebSocket per user,
 * each sending every kind of action at its per-user and per-connection limits (the README's Limits:
 * WS_ACTIONS_PER_SECOND actions a connection, of which USER_SENDS_PER_SECOND-bound sends,
 * USER_WRITES_PER_SECOND-bound edits, deletes, reactions and read marks, and
 * USER_TYPING_PER_SECOND-bound typing), spread evenly over each second, for `durationMs`. Prints
 * one JSON line when its sockets are open, and one with what it sent and how each kind was
 * answered when it is done; it exits by itself.
 *
 * Two behaviours towards the node's retry hints (`mode`):
 * - `ignore`, a hostile client: it sends on schedule whatever it is told, reconnects as soon as a
 *   socket is closed, and retries a refused upgrade after 1 s whatever its Retry-After says;
 * - `obey`, a client at the limits: after a RATE_LIMITED with `retryAfter`, that socket skips its
 *   scheduled actions until the time has passed.
 *
 * Input (a JSON file named by argv[2]): { base, sockets: [{ jwt, chatId }], mix: { <action>: per second }, durationMs, mode }.
 */

interface Input {
  base: string;
  sockets: { jwt: string; chatId: string }[];
  mix: Record<string, number>;
  durationMs: number;
  mode: 'ignore' | 'obey';
}

const input = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Input;
const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
// Bounded whatever happens: the parent's run is over by then.
setTimeout(() => process.exit(3), input.durationMs + 60_000).unref();

interface Sock {
  ws: RawWs;
  jwt: string;
  chatId: string;
  /** `obey`: no action before this time (ms, the clock's). */
  waitUntil: number;
  /** A message of this socket's (from its first acked send) that edits, reactions and deletes target. */
  messageId?: string;
  seq: number;
  /** Action id → kind, until answered. */
  pending: Map<string, string>;
}

const answered: Record<string, Record<string, number>> = {};
/** How sockets ended and how reconnects were answered, by close reason or upgrade status. */
const closes: Record<string, number> = {};
const upgrades: Record<string, number> = {};
let held = 0;
const bump = (of: Record<string, number>, key: string) => void (of[key] = (of[key] ?? 0) + 1);
const count = (kind: string, outcome: string) => {
  const of = (answered[kind] ??= {});
  of[outcome] = (of[outcome] ?? 0) + 1;
};
let nextId = 1;
const ID = /"id":"(\d+)"/;
const CODE = /"code":"([A-Z_]+)"/;
const MESSAGE_ID = /"messageId":"([0-9a-f-]{36})"/;
const SEQ = /"seq":(\d+)/;

function onFrame(s: Sock, payload: Buffer): void {
  const text = payload.toString('utf8', 0, Math.min(payload.length, 400));
  const isAck = text.startsWith('{"v":1,"type":"ack"');
  if (!isAck && !text.startsWith('{"v":1,"type":"error"')) return; // events: the chat's traffic
  const id = ID.exec(text)?.[1];
  const kind = id && s.pending.get(id);
  if (!id || !kind) return;
  s.pending.delete(id);
  if (!isAck) {
    const code = CODE.exec(text)?.[1] ?? 'ERROR';
    if (input.mode === 'obey' && code === 'RATE_LIMITED') {
      const retryAfter = Number(/"retryAfter":([0-9.]+)/.exec(text)?.[1] ?? 0);
      if (retryAfter > 0) s.waitUntil = Math.max(s.waitUntil, now() + retryAfter * 1000);
    }
    return count(kind, code);
  }
  count(kind, 'ok');
  if (kind === 'message.send' && !s.messageId) {
    s.messageId = MESSAGE_ID.exec(text)?.[1];
    s.seq = Number(SEQ.exec(text)?.[1] ?? 0);
  }
}

function frame(s: Sock, kind: string): string | undefined {
  const base = { type: kind, id: String(nextId++), chatId: s.chatId };
  switch (kind) {
    case 'message.send':
      return JSON.stringify({ ...base, content: 'flood' });
    case 'message.edit':
      return s.messageId && JSON.stringify({ ...base, messageId: s.messageId, content: `flood edit ${nextId}` });
    case 'message.delete':
      return s.messageId && JSON.stringify({ ...base, messageId: s.messageId });
    case 'reaction.add':
    case 'reaction.remove':
      return s.messageId && JSON.stringify({ ...base, messageId: s.messageId, reaction: '🔥' });
    case 'read.mark':
      return JSON.stringify({ ...base, seq: s.seq });
    default:
      return JSON.stringify(base); // typing.start, typing.stop
  }
}

const sockets: Sock[] = [];
let flooding = true;

/** Opens (or reopens) a socket's connection; resolves once it is ready or refused. */
function connectSock(s: Sock): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let ready = false;
    s.ws = new RawWs(`${input.base.replace('http', 'ws')}/ws?token=${s.jwt}`, {
      onOpen: (error) => {
        if (!error) return;
        bump(upgrades, error);
        resolve(false);
        // Hostile: back after 1 s, whatever Retry-After said.
        if (flooding && sockets.includes(s)) setTimeout(() => void connectSock(s), 1000);
      },
      onClose: (reason) => {
        bump(closes, reason);
        resolve(ready);
        if (flooding && sockets.includes(s)) void connectSock(s); // hostile: at once
      },
      onFrame: (payload) => {
        if (!ready && payload.toString('utf8', 0, 21) === '{"v":1,"type":"ready"') {
          ready = true;
          if (s.chatId && !sockets.includes(s)) sockets.push(s);
          resolve(true);
        } else onFrame(s, payload);
      },
    });
  });
}

async function openAll(): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < input.sockets.length) {
        const spec = input.sockets[next++]!;
        const s: Sock = { jwt: spec.jwt, chatId: spec.chatId, seq: 0, waitUntil: 0, pending: new Map(), ws: undefined as unknown as RawWs };
        await connectSock(s);
      }
    }),
  );
}

await openAll();
out({ open: sockets.length });
// Each second, every socket sends the mix: one schedule of kinds spread evenly, each socket offset.
const schedule: string[] = Object.entries(input.mix).flatMap(([kind, n]) => Array.from({ length: n }, () => kind));
for (let i = schedule.length - 1; i > 0; i--) {
  const j = (i * 7919) % (i + 1);
  [schedule[i], schedule[j]] = [schedule[j]!, schedule[i]!];
}
const interval = 1000 / schedule.length;
const start = now();
const end = start + input.durationMs;
const offsets = sockets.map((_, i) => (i / sockets.length) * interval);
const sentAt = sockets.map(() => 0);
let sent = 0;
await new Promise<void>((resolve) => {
  const tick = () => {
    const t = now();
    for (let i = 0; i < sockets.length; i++) {
      const s = sockets[i]!;
      while (start + offsets[i]! + sentAt[i]! * interval <= Math.min(t, end)) {
        const kind = schedule[sentAt[i]! % schedule.length]!;
        sentAt[i]!++;
        if (t < s.waitUntil || !s.ws.isOpen) {
          held++; // told to wait (obey), or closed and not yet back (ignore)
          continue;
        }
        // Until the first send is acked, actions on a message go as sends.
        const f = frame(s, kind) ?? frame(s, 'message.send')!;
        const id = /"id":"(\d+)"/.exec(f)![1]!;
        s.pending.set(id, JSON.parse(f).type as string);
        s.ws.send(f);
        sent++;
      }
    }
    if (t >= end) resolve();
    else setTimeout(tick, 2);
  };
  tick();
});
flooding = false;
await new Promise((resolve) => setTimeout(resolve, 2000));
let unanswered = 0;
for (const s of sockets) unanswered += s.pending.size; // on sockets closed by the node too
out({ done: true, sockets: sockets.length, seconds: input.durationMs / 1000, sent, held, answered, unanswered, closes, upgrades });
process.exit(0);
