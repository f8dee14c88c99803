import t from 'tap';
import { client, requireService } from '../helpers/index.ts';
import { clusterApp, clusterBackends, startCluster } from '../helpers/cluster.ts';

// README, "Attachments", on 2 nodes and a control service of their own over Cassandra, Redis and
// an S3-compatible server: attachment settings set through the management API apply on every
// node to the next upload, though each node trusts what it read for a second; an upload taken on
// one node and finalized on the other stops counting twice against the application's total.
const backends = await clusterBackends(t);
const s3 = await requireService('objectstore', (line) => t.comment(line));
if (!s3) t.skip('object store not running', () => undefined);
if (backends && s3) {
  const cluster = await startCluster({
    size: 2,
    ...backends,
    env: {
      ATTACHMENTS_STORE: 's3',
      S3_ENDPOINT: `http://${s3.host}:${s3.port}`,
      S3_BUCKET: 'chat-service-attachment-tests',
      S3_ACCESS_KEY_ID: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
      S3_SECRET_ACCESS_KEY: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
      KEY_STATUS_TTL_MS: '1000',
      USAGE_FLUSH_SECONDS: '1',
    },
  });
  t.teardown(() => cluster.stop());

  t.test('a change made on the control service applies on every node at once', async (t) => {
    const { appId, mgmtToken, users } = await clusterApp(cluster, ['att-ann']);
    const ann = users[0]!;
    const chatId = (await client(cluster.nodes[0]!.url).post('/api/chats', { type: 'group', name: 'files', memberIds: [] }, ann.jwt)).body.chatId as string;
    const ask = (node: number) => client(cluster.nodes[node]!.url).post(`/api/chats/${chatId}/uploads`, { name: 'f.pdf', size: 5000, type: 'application/pdf' }, ann.jwt);
    // Both nodes have read (and trust for a second) that the application sets nothing.
    for (const node of [0, 1]) t.equal((await ask(node)).status, 201, `node ${node} takes 5,000 bytes`);
    const set = await client(cluster.control.controlUrl).put(`/api/client/apps/${appId}/attachment-settings`, { maxFileBytes: 4000 }, mgmtToken);
    t.equal(set.status, 200, set.text);
    const setAt = Date.now();
    for (const node of [0, 1]) {
      let code: string | undefined;
      // The announcement rides the bus: a few milliseconds, well inside the second a node trusts its copy.
      while ((code = (await ask(node)).body.code) !== 'FILE_TOO_LARGE' && Date.now() - setAt < 500) await new Promise((resolve) => setTimeout(resolve, 20));
      t.equal(code, 'FILE_TOO_LARGE', `node ${node} refuses 5,000 bytes (${Date.now() - setAt} ms after the change)`);
    }
  });

  t.test('an upload asked for on node A and finalized on node B stops holding its size on A at once', async (t) => {
    const { appId, mgmtToken, users } = await clusterApp(cluster, ['att-quota-ann']);
    const ann = users[0]!;
    const [a, b] = [client(cluster.nodes[0]!.url), client(cluster.nodes[1]!.url)];
    t.equal((await client(cluster.control.controlUrl).put(`/api/client/apps/${appId}/attachment-settings`, { maxTotalBytes: 5000 }, mgmtToken)).status, 200);
    const chatId = (await a.post('/api/chats', { type: 'group', name: 'quota', memberIds: [] }, ann.jwt)).body.chatId as string;
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(2600 - 9, 0x20)]);
    const asked = await a.post(`/api/chats/${chatId}/uploads`, { name: 'f.pdf', size: pdf.length, type: 'application/pdf' }, ann.jwt);
    t.equal(asked.status, 201, asked.text);
    t.equal((await fetch(asked.body.upload.url, { method: 'PUT', headers: asked.body.upload.headers, body: new Uint8Array(pdf) })).status, 200);
    t.equal((await b.post(`/api/chats/${chatId}/uploads/${asked.body.uploadId}/finalize`, undefined, ann.jwt)).status, 200, 'finalized on node B');
    // Stored: 2,600 of 5,000, once node B's usage flush (every second) reached the store; node A
    // reads that figure again within 5 s. A must not also hold the 2,600 it took: 2,400 more fit.
    const mgmt = client(cluster.control.controlUrl);
    let stored: unknown;
    for (const until = Date.now() + 10_000; (stored = (await mgmt.get(`/api/client/apps/${appId}/usage`, mgmtToken)).body.storedFileBytes) !== 2600 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 250));
    t.equal(stored, 2600, 'the usage shows the file');
    await new Promise((r) => setTimeout(r, 5_500));
    t.equal((await a.post(`/api/chats/${chatId}/uploads`, { name: 'g.pdf', size: 2400 }, ann.jwt)).status, 201, 'node A takes what is left of the total');
    t.match(await a.post(`/api/chats/${chatId}/uploads`, { name: 'h.pdf', size: 1 }, ann.jwt), { status: 413, body: { code: 'STORAGE_QUOTA_EXCEEDED' } }, 'and not a byte more');
  });
}
