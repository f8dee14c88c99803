import t from 'tap';
import { S3ObjectStore } from '../../node/files/index.ts';
import { requireService } from '../helpers/index.ts';
import { objectStoreConformance, testRoot } from './object-store-conformance.ts';

const address = await requireService('objectstore', (line) => t.comment(line));
if (!address) {
  t.comment('!!! S3 object store suite SKIPPED: no S3-compatible server (scripts/services.sh start objectstore) !!!');
  t.skip('object store not running', () => undefined);
} else {
  const options = {
    endpoint: `http://${address.host}:${address.port}`,
    bucket: 'chat-service-tests',
    region: 'us-east-1',
    accessKeyId: process.env.S3_ACCESS_KEY_ID ?? 'chat-service-dev',
    secretAccessKey: process.env.S3_SECRET_ACCESS_KEY ?? 'chat-service-dev-secret',
  };
  objectStoreConformance(t, 's3', async () => {
    const store = await S3ObjectStore.open(options);
    const root = testRoot();
    return {
      store,
      root,
      close: async () => {
        await store.deletePrefix(`${root}/`);
        await store.close();
      },
    };
  });

  t.test('s3: a bucket the store creates lets browsers of CORS_ORIGINS put and get; one it finds keeps its rules', async (t) => {
    const bucket = `chat-service-cors-${Date.now().toString(36)}`;
    const store = await S3ObjectStore.open({ ...options, bucket, corsOrigins: ['http://app.test'] });
    t.teardown(() => store.close());
    const put = await store.presignPut('k/file', { size: 5, contentType: 'text/plain', expiresInSeconds: 60 });
    const preflight = (origin: string, url = put.url) =>
      fetch(url, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'content-type' } });
    const allowed = await preflight('http://app.test');
    t.equal(allowed.headers.get('access-control-allow-origin'), 'http://app.test', `the app's origin may PUT (${allowed.status})`);
    t.match(allowed.headers.get('access-control-allow-methods') ?? '', /PUT/);
    const other = await preflight('http://elsewhere.test');
    t.not(other.headers.get('access-control-allow-origin'), 'http://elsewhere.test', 'another origin may not');
    // Opened again with other origins: the bucket exists, its rules stay as they are.
    const again = await S3ObjectStore.open({ ...options, bucket, corsOrigins: ['http://elsewhere.test'] });
    t.teardown(() => again.close());
    await again.head('k/file');
    t.not((await preflight('http://elsewhere.test')).headers.get('access-control-allow-origin'), 'http://elsewhere.test', 'an existing bucket keeps its rules');
    const none = await S3ObjectStore.open({ ...options, bucket: `${bucket}-none` });
    t.teardown(() => none.close());
    const bare = await none.presignPut('k/file', { size: 5, contentType: 'text/plain', expiresInSeconds: 60 });
    t.not((await preflight('http://app.test', bare.url)).headers.get('access-control-allow-origin'), 'http://app.test', 'no origins: no rules');
  });

  t.test('s3: opening creates a missing bucket, and a second open finds it', async (t) => {
    const bucket = `chat-service-tests-${Date.now().toString(36)}`;
    const a = await S3ObjectStore.open({ ...options, bucket });
    const b = await S3ObjectStore.open({ ...options, bucket });
    await a.put('x/y', Buffer.from('z'), 'text/plain');
    t.equal((await b.head('x/y'))?.size, 1);
    await a.deletePrefix('x/');
    await Promise.all([a.close(), b.close()]);
  });

  t.test('s3: wrong credentials fail the open, naming the cause', async (t) => {
    await t.rejects(S3ObjectStore.open({ ...options, secretAccessKey: 'wrong' }));
  });
}
