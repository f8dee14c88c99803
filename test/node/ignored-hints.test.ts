import t from 'tap';
import WebSocket from 'ws';
import { integration, startService, WsClient } from '../helpers/index.ts';

// PROTOCOL.md, "Retry hints": a connection refused by a connection-wide limit is told to wait
// (retryAfter); one that keeps sending anyway is closed with 4029, and its user's upgrades on the
// node are refused 429 for a while. A client that waits as told, and one whose burst was already
// on its way, are never closed.
const svc = await startService({ WS_ACTIONS_PER_SECOND: '5', APP_ACTIONS_PER_SECOND: '100000', USER_WRITES_PER_SECOND: '1000', USER_TYPING_PER_SECOND: '1000' });
t.teardown(() => svc.stop());
const app = await integration(svc, 'hints');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What a WebSocket client sees of an upgrade the node refuses: status, Retry-After and the problem's code. */
function refusedUpgrade(nodeUrl: string, jwt: string): Promise<{ status: number; retryAfter?: string; code?: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`);
    socket.once('open', () => {
      socket.close();
      reject(new Error('the upgrade was taken'));
    });
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, code: (JSON.parse(body) as { code?: string }).code }));
    });
    socket.once('error', () => undefined);
  });
}

t.test('a socket that keeps sending while told to wait is closed with 4029 and its user kept out for a while', async (t) => {
  const [flooder, bystander] = [await app.user('flooder'), await app.user('bystander')];
  const ws = await WsClient.connect(svc.nodeUrl, flooder.jwt);
  const other = await WsClient.connect(svc.nodeUrl, bystander.jwt);
  t.teardown(() => Promise.all([ws.close(), other.close()]));
  // 100 actions a second, against 5 allowed: refused with a hint from the 11th on (bursts of 2x).
  const started = Date.now();
  while (!ws.closed && Date.now() - started < 3000) {
    ws.sendRaw(JSON.stringify({ type: 'ping', id: `p${Date.now()}` }));
    await sleep(10);
  }
  const closed = ws.closed ?? (await ws.waitClosed());
  t.equal(closed.code, 4029, 'closed with 4029');
  const reason = JSON.parse(closed.reason) as { reason: string; reconnect: string; retryAfter: number };
  t.equal(reason.reconnect, 'now');
  t.equal(reason.retryAfter, 30, 'the reason says when to come back');
  t.ok(Date.now() - started < 2000, `closed within the grace and the strikes (${Date.now() - started} ms)`);
  const hinted = ws.frames.find((f) => f.type === 'error' && f.code === 'RATE_LIMITED');
  const hint = Number(hinted?.retryAfter);
  t.ok(hint >= 0.5 && hint < 2, `the refusals it ignored carried retryAfter, jittered (${hint} s)`);
  const hints = new Set(ws.frames.filter((f) => f.code === 'RATE_LIMITED').map((f) => f.retryAfter));
  t.ok(hints.size > 1, `hints differ from one refusal to the next (${[...hints].slice(0, 5).join(', ')} …)`);

  const again = await refusedUpgrade(svc.nodeUrl, flooder.jwt);
  t.equal(again.status, 429, 'its next upgrade is refused');
  t.ok(Number(again.retryAfter) >= 28, `with Retry-After (${again.retryAfter})`);
  t.equal(again.code, 'RATE_LIMITED');
  // A new sign-in gives the user a new token: the cooldown is the user's, not the token's.
  await sleep(1100); // a JWT's times are in seconds: signed in the same second, it would be the same token
  const signed = await app.node.post('/api/users/signin', { userId: flooder.userId }, app.apiKey);
  t.not(signed.body.jwt, flooder.jwt);
  t.equal((await refusedUpgrade(svc.nodeUrl, signed.body.jwt as string)).status, 429, "the user's other tokens are refused too");

  t.equal((await other.request({ type: 'ping' })).type, 'ack', 'another user of the same application is untouched');
  const fresh = await WsClient.connect(svc.nodeUrl, bystander.jwt);
  t.teardown(() => fresh.close());
  t.equal((await fresh.request({ type: 'ping' })).type, 'ack', 'and still connects');
});

t.test('a burst already on its way, and a client that waits as told, are not closed', async (t) => {
  const user = await app.user('polite');
  const ws = await WsClient.connect(svc.nodeUrl, user.jwt);
  t.teardown(() => ws.close());
  // 200 frames at once: 10 taken, 190 refused, all within the grace of the first refusal.
  const burst = await Promise.all(Array.from({ length: 200 }, () => ws.request({ type: 'ping' })));
  t.equal(burst.filter((f) => f.type === 'ack').length, 10, 'the burst allowance is taken');
  t.equal(burst.filter((f) => f.code === 'RATE_LIMITED').length, 190, 'the rest refused');
  // Then 3 s of a client honouring every hint: after a refusal it waits retryAfter seconds.
  await sleep(1000);
  let acked = 0;
  const until = Date.now() + 3000;
  while (Date.now() < until) {
    const reply = await ws.request({ type: 'ping' });
    if (reply.type === 'ack') acked++;
    else await sleep((reply.retryAfter as number) * 1000);
  }
  t.equal(ws.closed, undefined, 'never closed');
  t.ok(acked >= 8, `it kept being served (${acked} acks in 3 s at 5 a second)`);
});

t.test('limits of one kind of action refuse that kind only and close nothing', async (t) => {
  const svc2 = await startService({ USER_TYPING_PER_SECOND: '1', WS_ACTIONS_PER_SECOND: '1000', APP_ACTIONS_PER_SECOND: '100000' });
  t.teardown(() => svc2.stop());
  const app2 = await integration(svc2, 'typing');
  const [a, b] = [await app2.user('a'), await app2.user('b')];
  const chatId = (await app2.node.post('/api/chats', { type: 'direct', userId: b.userId }, a.jwt)).body.chatId as string;
  const ws = await WsClient.connect(svc2.nodeUrl, a.jwt);
  t.teardown(() => ws.close());
  let refused = 0;
  const until = Date.now() + 1500;
  while (Date.now() < until) {
    const reply = await ws.request({ type: 'typing.start', chatId });
    if (reply.code === 'RATE_LIMITED') refused++;
    await sleep(5);
  }
  t.ok(refused > 40, `typing past its limit was refused (${refused})`);
  t.equal(ws.closed, undefined, 'the socket stays open');
  t.equal((await ws.request({ type: 'message.send', chatId, content: 'still here' })).type, 'ack', 'and other actions are served');
});
