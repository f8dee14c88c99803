import { randomBytes } from 'node:crypto';
import t, { type Test } from 'tap';
import { onEachObjectStore } from '../helpers/index.ts';
import { sdkApp } from '../helpers/sdk-app.ts';

/**
 * In Node, uploadFile's onProgress moves as the bytes go: the body is streamed to the signed URL in
 * 64 KiB chunks, each counted as fetch takes it, so a file of a few megabytes reports many values
 * between 0 and its size, never going back, ending at its size. Through the node's own route
 * (embedded store) and straight to the S3-compatible server (whose signed PUT needs the exact
 * Content-Length: a streamed body is not sent chunked).
 */
const PDF = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(3 * 1024 * 1024), Buffer.from('\n%%EOF\n')]);

async function progressOn(t: Test, env: Record<string, string>) {
  const { server, client } = await sdkApp(t, `progress ${env.ATTACHMENTS_STORE ?? 'local'}`, env);
  const alice = await server.registerUser({ username: `alice-${process.pid}` });
  const A = await client(t, alice.userId);
  const chat = await A.createGroup('Reports', []);
  const seen: number[] = [];
  const attachment = await A.uploadFile(chat.chatId, new Uint8Array(PDF), { name: 'big.pdf', onProgress: (sent, total) => total === PDF.length && seen.push(sent) });
  t.match(attachment, { name: 'big.pdf', type: 'application/pdf', size: PDF.length });
  const between = seen.filter((v) => v > 0 && v < PDF.length);
  t.ok(between.length >= 10, `progress between 0 and the size, as the bytes went (${between.length} values, ${seen.length} in all)`);
  t.ok(
    seen.every((v, i) => i === 0 || v >= seen[i - 1]!),
    'never going back',
  );
  t.equal(seen.at(-1), PDF.length, 'ending at the whole file');
}

await onEachObjectStore(t, 'chat-service-sdk-progress-tests', progressOn);
