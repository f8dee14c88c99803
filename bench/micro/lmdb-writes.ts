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
 *   node --import tsx bench/micro/lmdb-writes.ts [--chats 20] [--batch 1,16] [--seconds 5]
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
const CONTENT = 'a benchmark message of a modest, realistic length';

async function run(batch: number) {
  const dir = mkdtempSync(join(tmpdir(), 'lmdb-writes-'));
  const store = LmdbNodeStore.open(dir);
  const appId = 'bench-app';
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
        const messages: StoredMessage[] = Array.from({ length: batch }, (_, i) => {
          const seq = head.seq + i + 1;
          return { appId, chatId, id: newMessageId(seq), seq, rev: head.rev + i + 1, senderId: 'sender', content: CONTENT, createdAt: new Date().toISOString(), reactions: [] };
        });
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

for (const batch of batches) await run(batch);
