import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbNodeStore, newMessageId, type ChatHead, type StoredMessage } from '../../node/store/index.ts';

/**
 * What a message write costs the embedded store (LMDB) in this process's CPU, with no chat
 * service in the way: `chats` chats each put `batch` new messages at a time, fenced on their head
 * as a chat's actor does, all chats at once (so lmdb-js gathers their puts into shared write
 * transactions, each synced to disk), for `seconds`. Prints the messages written a second, the
 * puts and transactions, and the CPU µs per message (the main thread and lmdb-js's write thread
 * together: process.cpuUsage). The floor under the fanout and sends benches' store share.
 *
 * With `--rates`, open loop instead: messages arrive at each rate in total, spread evenly over the
 * chats; a chat writes what has arrived in one fenced put at a time (what arrives meanwhile goes in
 * its next, as a chat's group commit does). Prints each message's time from its arrival to its put
 * being durable, p50, p99 and max: how much of a delivery's latency the disk's syncs alone take.
 *
 *   node --import tsx bench/micro/lmdb-writes.ts [--chats 20] [--batch 1,16] [--seconds 5]
 *   node --import tsx bench/micro/lmdb-writes.ts --rates 200,700,1400 [--chats 20] [--seconds 5]
 *
 * The store lives in a fresh directory under the system's temporary directory, removed at the end.
 */
const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const chats = Number(arg('chats', '20'));
const batches = arg('batch', '1,16').split(',').map(Number);
const seconds = Number(arg('seconds', '5'));
const rates = process.argv.includes('--rates') ? arg('rates', '').split(',').map(Number) : [];
const CONTENT = 'a benchmark message of a modest, realistic length';
const appId = 'bench-app';

function message(chatId: string, seq: number, rev: number): StoredMessage {
  return { appId, chatId, id: newMessageId(seq), seq, rev, senderId: 'sender', content: CONTENT, createdAt: new Date().toISOString(), reactions: [] };
}

async function run(batch: number) {
  const dir = mkdtempSync(join(tmpdir(), 'lmdb-writes-'));
  const store = LmdbNodeStore.open(dir);
  let written = 0;
  let puts = 0;
  const until = performance.now() + seconds * 1000;
  const cpu = process.cpuUsage();
  const started = performance.now();
  // One writer per chat, one put in flight each, as a chat's group commit does.
  await Promise.all(
    Array.from({ length: chats }, async (_, c) => {
      const chatId = `chat-${c}`;
      let head: ChatHead = { seq: 0, rev: 0 };
      while (performance.now() < until) {
        const messages = Array.from({ length: batch }, (_, i) => message(chatId, head.seq + i + 1, head.rev + i + 1));
        const to = { seq: head.seq + batch, rev: head.rev + batch };
        await store.messages.put(messages, { from: head, to });
        head = to;
        written += batch;
        puts++;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const cpuUs = used.user + used.system;
  console.log(
    `chats ${chats}, batch ${batch}: ${Math.round(written / wall)} msgs/s, ${Math.round(puts / wall)} puts/s, ` +
      `CPU ${(cpuUs / 1e6 / wall).toFixed(2)} cores, ${(cpuUs / written).toFixed(1)} µs/msg, ${(cpuUs / puts).toFixed(1)} µs/put`,
  );
}

/** Open loop at `rate` messages a second in total: each message's time from arrival to durable. */
async function atRate(rate: number) {
  const dir = mkdtempSync(join(tmpdir(), 'lmdb-writes-'));
  const store = LmdbNodeStore.open(dir);
  const latencies: number[] = [];
  const arrived: number[][] = Array.from({ length: chats }, () => []);
  const heads: ChatHead[] = Array.from({ length: chats }, () => ({ seq: 0, rev: 0 }));
  /** Each chat's write loop while it runs: one put at a time of what has arrived, until nothing is left. */
  const loops: (Promise<void> | undefined)[] = Array.from({ length: chats }, () => undefined);
  const drain = async (c: number): Promise<void> => {
    while (arrived[c]!.length > 0) {
      const batch = arrived[c]!.splice(0, 256);
      const from = heads[c]!;
      const to = { seq: from.seq + batch.length, rev: from.rev + batch.length };
      await store.messages.put(batch.map((_, i) => message(`chat-${c}`, from.seq + i + 1, from.rev + i + 1)), { from, to });
      heads[c] = to;
      const now = performance.now();
      for (const at of batch) latencies.push(now - at);
    }
    loops[c] = undefined;
  };
  const started = performance.now();
  let sent = 0;
  await new Promise<void>((done) => {
    const tick = setInterval(() => {
      const now = performance.now();
      const due = Math.min(Math.floor(((now - started) / 1000) * rate), rate * seconds);
      for (; sent < due; sent++) {
        const c = sent % chats;
        arrived[c]!.push(started + (sent * 1000) / rate);
        loops[c] ??= drain(c);
      }
      if (sent >= rate * seconds) {
        clearInterval(tick);
        done();
      }
    }, 1);
  });
  await Promise.all(loops);
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(`chats ${chats}, ${rate} msgs/s: arrival to durable p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms (${latencies.length} messages)`);
}

if (rates.length > 0) for (const rate of rates) await atRate(rate);
else for (const batch of batches) await run(batch);
