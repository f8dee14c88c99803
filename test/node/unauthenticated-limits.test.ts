import t from 'tap';
import { integration, startService } from '../helpers/index.ts';
import { assertProblem, retryAfterSeconds } from '../helpers/problem.ts';

// The node's routes that take no user JWT have budgets too (README, Limits): refresh-token
// exchanges per client address, and requests per API key.
const svc = await startService({ REFRESH_PER_ADDRESS_PER_MINUTE: '3', API_KEY_REQUESTS_PER_SECOND: '5' });
t.teardown(() => svc.stop());
const it = await integration(svc, 'budget');

t.test('refresh-token exchanges are limited per client address, valid or not', async (t) => {
  const replies = [];
  for (let i = 0; i < 4; i++) replies.push(await it.node.post('/api/users/refresh', { refreshToken: `urt_${it.appId}.guess-${i}` }));
  t.same(replies.slice(0, 3).map((r) => r.status), [401, 401, 401], 'three guesses are checked');
  assertProblem(t, replies[3]!, 429, 'RATE_LIMITED', 'the fourth within the minute');
  t.ok(retryAfterSeconds(replies[3]!) >= 1, 'with Retry-After');
});

t.test('requests per API key are limited', async (t) => {
  await new Promise((resolve) => setTimeout(resolve, 1100));
  const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => it.node.post('/api/users', { username: `burst-${process.pid}-${i}` }, it.apiKey)));
  const statuses = replies.map((r) => r.status).sort();
  t.same(statuses, [201, 201, 201, 201, 201, 429, 429, 429], 'five in the second, the rest 429');
  const limited = replies.find((r) => r.status === 429)!;
  assertProblem(t, limited, 429, 'RATE_LIMITED', 'over the key budget');
});

t.test('node-to-node calls are not served on the public listener', async (t) => {
  for (const path of ['/internal/v1/op', '/internal/op', '/rpc']) {
    const res = await it.node.post(path, { op: 'send', args: [] });
    t.equal(res.status, 404, `${path}: 404`);
    t.equal(res.body.code, 'ROUTE_NOT_FOUND');
  }
});
