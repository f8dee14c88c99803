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
 * Input (a JSON file named by argv[2]): { base, sockets: [{ jwt, chatId }], mix: { <action>: per second }, durationMs }.
 */

interface Input {
  base: string;
  sockets: { jwt: string; chatId: string }[];
  mix: Record<string, number>;
  durationMs: number;
}

const input = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Input;
const out = (line: unknown) => process.stdout.write(`${JSON.stringify(line)}\n`);
// Bounded whatever happens: the parent's run is over by then.
setTimeout(() => process.exit(3), input.durationMs + 60_000).unref();

interface Sock {
  ws: RawWs;
  chatId: string;
  /** A message of this socket's (from its first acked send) that edits, reactions and deletes target. */
  messageId?: string;
  seq: number;
  /** Action id → kind, until answered. */
  pending: Map<string, string>;
}

const answered: Record<string, Record<string, number>> = {};
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
  if (!isAck) return count(kind, CODE.exec(text)?.[1] ?? 'ERROR');
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
async function openAll(): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < input.sockets.length) {
        const spec = input.sockets[next++]!;
        await new Promise<void>((resolve) => {
          const s: Sock = { chatId: spec.chatId, seq: 0, pending: new Map(), ws: undefined as unknown as RawWs };
          s.ws = new RawWs(`${input.base.replace('http', 'ws')}/ws?token=${spec.jwt}`, {
            onOpen: (error) => error && resolve(),
            onClose: () => resolve(),
            onFrame: (payload) => {
              if (payload.toString('utf8', 0, 21) === '{"v":1,"type":"ready"') {
                sockets.push(s);
                resolve();
              } else onFrame(s, payload);
            },
          });
        });
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
        // Until the first send is acked, actions on a message go as sends.
        const f = frame(s, kind) ?? frame(s, 'message.send')!;
        const id = /"id":"(\d+)"/.exec(f)![1]!;
        s.pending.set(id, JSON.parse(f).type as string);
        if (s.ws.isOpen) s.ws.send(f);
        sent++;
      }
    }
    if (t >= end) resolve();
    else setTimeout(tick, 2);
  };
  tick();
});
await new Promise((resolve) => setTimeout(resolve, 2000));
let unanswered = 0;
for (const s of sockets) {
  unanswered += s.pending.size;
  s.ws.close();
}
out({ done: true, sockets: sockets.length, seconds: input.durationMs / 1000, sent, answered, unanswered });
process.exit(0);
