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
