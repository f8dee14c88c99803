import { randomBytes } from 'node:crypto';
import { newHistogram, percentiles } from '../lib/histogram.ts';
import type { Row } from '../lib/output.ts';
import { processStats } from '../lib/process-stats.ts';
import { createGroups, inParallel } from '../lib/provision.ts';
import { startSingle, type Target } from '../lib/targets.ts';
import { round, type Context } from './context.ts';
import type { ScenarioOptions, ScenarioOutput } from './options.ts';
import { mean } from './send-figures.ts';

const CONTENT = 'a benchmark message of a modest, realistic length';
/** The file each attachment send carries: a small PDF (finalize sniffs it and makes no thumbnail). */
const SMALL = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');

interface Sender {
  jwt: string;
  chatId: string;
}

async function call(url: string, init: { method: string; jwt: string; body?: unknown }): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: init.method, headers: { authorization: `Bearer ${init.jwt}`, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method} ${new URL(url).pathname}: ${res.status} ${text.slice(0, 200)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Ask, put, finalize: one whole upload, as the SDK's uploadFile makes it. */
async function upload(node: string, s: Sender, bytes: Uint8Array<ArrayBuffer>, name: string, type: string): Promise<string> {
  const asked = (await call(`${node}/api/chats/${s.chatId}/uploads`, { method: 'POST', jwt: s.jwt, body: { name, size: bytes.length, type } })) as { uploadId: string; upload: { url: string; headers: Record<string, string> } };
  // fetch sets Content-Length from the body itself (the signed value, as the body is that size).
  const { 'content-length': _length, ...headers } = asked.upload.headers;
  const put = await fetch(asked.upload.url, { method: 'PUT', headers, body: bytes }).catch((error: unknown) => {
    throw new Error(`PUT ${asked.upload.url.split('?')[0]}: ${String((error as { cause?: unknown }).cause ?? error)}`);
  });
  if (!put.ok) throw new Error(`PUT ${put.status} ${await put.text()}`);
  await put.arrayBuffer();
  await call(`${node}/api/chats/${s.chatId}/uploads/${asked.uploadId}/finalize`, { method: 'POST', jwt: s.jwt });
  return asked.uploadId;
}

/**
 * What attachments cost on one node on the embedded store, this service alone (the peers have no
 * storage to compare): the upload rate of 1 MB files (ask, PUT, finalize), and closed-loop sends
 * over HTTP, one in flight per sender, each sender in a chat of its own, plain and with one
 * finalized attachment each (uploaded before the round, not measured), in alternating rounds of
 * `--sends` per sender so the machine's drift falls on both, after one unrecorded round of each.
 * Server CPU is the node's process.
 */
export async function attachments(ctx: Context, o: ScenarioOptions): Promise<ScenarioOutput> {
  const senders = o.num('senders', o.smoke ? 4 : 64);
  const perSender = o.num('sends', o.smoke ? 5 : 60);
  const rounds = o.num('rounds', o.smoke ? 1 : 3);
  const uploaders = o.num('uploaders', o.smoke ? 2 : 8);
  const fileMb = o.num('file-mb', 1, false);
  const uploadCount = o.num('uploads', o.smoke ? 4 : 200);
  const rows: Row[] = [];
  const byMode: Record<'plain' | 'attachment', { perSecond: number[]; cpuUs: number[]; p99: number[] }> = { plain: { perSecond: [], cpuUs: [], p99: [] }, attachment: { perSecond: [], cpuUs: [], p99: [] } };
  let uploadRow: Row | undefined;
  ctx.progress.plan(2 + (rounds + 1) * 2, 'chat: starting');
  let target: Target | undefined;
  try {
    target = await startSingle('chat', { users: senders, profileDir: ctx.profileDir });
    const node = target.nodes[0]!;
    const users = target.app!.users;
    const rooms = await createGroups(node, users.map((u) => [u]));
    const all: Sender[] = rooms.map((chatId, i) => ({ chatId, jwt: users[i]!.jwt }));
    ctx.progress.step();

    // Uploads of `fileMb` MB of random bytes (an opaque file: sniffed, stored, no image work).
    ctx.progress.stage(`chat: ${uploadCount} uploads of ${fileMb} MB`);
    const file = new Uint8Array(randomBytes(Math.round(fileMb * 1_000_000)));
    const hist = newHistogram();
    let before = await processStats(target.pids);
    let started = performance.now();
    await inParallel(uploadCount, uploaders, async (i) => {
      const t0 = performance.now();
      await upload(node, all[i % all.length]!, file, `file-${i}.bin`, 'application/octet-stream');
      hist.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
    });
    let seconds = (performance.now() - started) / 1000;
    let after = await processStats(target.pids);
    const up = percentiles(hist);
    uploadRow = {
      system: 'chat',
      mode: `upload ${fileMb} MB`,
      uploads: uploadCount,
      uploadsPerSecond: round(uploadCount / seconds, 1),
      megabytesPerSecond: round((uploadCount * file.length) / 1e6 / seconds, 1),
      p50Ms: up.p50Ms,
      p99Ms: up.p99Ms,
      serverCpuMsPerUpload: round(((after.cpuSeconds - before.cpuSeconds) * 1e3) / uploadCount, 2),
    };
    rows.push(uploadRow);
    ctx.log(`uploads: ${uploadRow.uploadsPerSecond}/s, ${uploadRow.megabytesPerSecond} MB/s, p99 ${up.p99Ms} ms, ${uploadRow.serverCpuMsPerUpload} ms server CPU each`);
    ctx.progress.step();

    // One round of each, not recorded, so neither mode's first round pays for the JIT's warmup.
    const schedule = [-1, ...Array.from({ length: rounds }, (_, r) => r)];
    for (const r of schedule) {
      for (const mode of ['plain', 'attachment'] as const) {
        ctx.progress.stage(r < 0 ? `chat: warmup, ${mode} sends` : `chat: round ${r + 1}, ${mode} sends`);
        // Each send of an attachment round carries a file of its own, uploaded now.
        const files = mode === 'plain' ? [] : await inParallel(senders * perSender, 32, (i) => upload(node, all[i % senders]!, SMALL, `doc-${r}-${i}.pdf`, 'application/pdf'));
        const sends = newHistogram();
        let errors = 0;
        before = await processStats(target.pids);
        started = performance.now();
        await Promise.all(
          all.map(async (s, k) => {
            for (let j = 0; j < perSender; j++) {
              const body = mode === 'plain' ? { content: CONTENT } : { content: CONTENT, attachments: [files[j * senders + k]!] };
              const t0 = performance.now();
              const res = await fetch(`${node}/api/messages/${s.chatId}`, { method: 'POST', headers: { authorization: `Bearer ${s.jwt}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
              await res.arrayBuffer();
              if (res.status === 201) sends.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
              else errors++;
            }
          }),
        );
        seconds = (performance.now() - started) / 1000;
        after = await processStats(target.pids);
        if (r < 0) {
          ctx.progress.step();
          continue;
        }
        const done = senders * perSender - errors;
        const p = percentiles(sends);
        const row: Row = {
          system: 'chat',
          mode: mode === 'plain' ? 'send, no attachment' : 'send, one attachment',
          round: r + 1,
          sends: done,
          errors,
          sendsPerSecond: round(done / seconds),
          p50Ms: p.p50Ms,
          p99Ms: p.p99Ms,
          serverCpuUsPerSend: done === 0 ? null : round(((after.cpuSeconds - before.cpuSeconds) * 1e6) / done, 1),
        };
        rows.push(row);
        byMode[mode].perSecond.push(Number(row.sendsPerSecond));
        byMode[mode].cpuUs.push(Number(row.serverCpuUsPerSend));
        byMode[mode].p99.push(Number(row.p99Ms));
        ctx.log(`round ${r + 1}, ${row.mode}: ${row.sendsPerSecond} sends/s, p99 ${row.p99Ms} ms, ${row.serverCpuUsPerSend} µs server CPU per send, ${errors} errors`);
        ctx.progress.step();
      }
    }
  } finally {
    await target?.stop();
  }
  const cpuRatio = round(mean(byMode.attachment.cpuUs) / mean(byMode.plain.cpuUs), 2);
  return {
    scenario: 'attachments',
    parameters: { senders, sendsPerSender: perSender, rounds, uploaders, fileMb, uploads: uploadCount },
    rows,
    summary: {
      upload: uploadRow,
      plain: { sendsPerSecond: round(mean(byMode.plain.perSecond)), serverCpuUsPerSend: round(mean(byMode.plain.cpuUs), 1), p99Ms: round(mean(byMode.plain.p99), 1) },
      attachment: { sendsPerSecond: round(mean(byMode.attachment.perSecond)), serverCpuUsPerSend: round(mean(byMode.attachment.cpuUs), 1), p99Ms: round(mean(byMode.attachment.p99), 1) },
      ratios: { cpuPerSend: cpuRatio, sendsPerSecond: round(mean(byMode.attachment.perSecond) / mean(byMode.plain.perSecond), 2) },
      goal: { want: '≤ 1.5× server CPU per send with one finalized attachment', got: cpuRatio, met: Number(cpuRatio) <= 1.5 },
    },
    notes: [
      'This service alone, on its embedded store (files under DATA_DIR/files): uws and socketio store no files.',
      'Uploads: ask, PUT to the signed URL (the node), finalize (the node reads the file back, sniffs its type, records it); from the upload being asked for to the finalize answered.',
      'Sends: closed loop over HTTP, one request in flight per sender, each answered 201 once durable; an attachment send also checks and records its upload (one read and one synced write of its record) in the chat\'s queue. Rounds alternate; the ratios are of the means.',
    ],
  };
}
