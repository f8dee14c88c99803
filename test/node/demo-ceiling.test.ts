import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import WebSocket from 'ws';
import { integration, nodeScript, startService, WsClient } from '../helpers/index.ts';

// README, "Tiers": a DEMO application has at most DEMO_MAX_CONCURRENT_USERS distinct users
// connected at once; the next new user's socket is closed with 4010 before `ready`, nobody
// connected is touched, and a user already connected opens more sockets freely. The operator's
// `app tier <appId> STANDARD` lifts the ceiling.
const CEILING = 3;
const svc = await startService({ DEMO_MAX_CONCURRENT_USERS: String(CEILING) });
t.teardown(() => svc.stop());
const ROOT = new URL('../..', import.meta.url).pathname;
const ctl = (...args: string[]) => promisify(execFile)(process.execPath, [...nodeScript('control/cli.ts'), ...args], { cwd: ROOT, env: { ...process.env, DATA_DIR: svc.dataDir } });

/** Opens a socket and reports how it went: `ready`, or the close code and reason that ended it first. */
function attempt(jwt: string): Promise<{ ready: true; ws: WebSocket } | { ready: false; code: number; reason: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${svc.nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(jwt)}`);
    ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type: string }).type === 'ready') resolve({ ready: true, ws });
    });
    ws.on('close', (code, reason) => resolve({ ready: false, code, reason: reason.length ? (JSON.parse(String(reason)) as Record<string, unknown>) : {} }));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
}

t.test('the DEMO ceiling: exactly the user past it is refused, until someone leaves', async (t) => {
  const app = await integration(svc, 'ceiling');
  const users = await Promise.all(Array.from({ length: CEILING + 2 }, (_, i) => app.user(`u${i}`)));
  const connected: WsClient[] = [];
  t.teardown(() => Promise.all(connected.map((c) => c.close())));
  for (const u of users.slice(0, CEILING)) connected.push(await WsClient.connect(svc.nodeUrl, u.jwt));
  t.pass(`${CEILING} users connected`);

  const refused = await attempt(users[CEILING]!.jwt);
  t.equal(refused.ready, false, 'the next user gets no ready');
  if (!refused.ready) {
    t.equal(refused.code, 4010, 'closed with 4010');
    t.match(refused.reason, { reconnect: 'now', retryAfter: 30 }, 'the reason says when to retry');
  }
  // A refused user's frames sent before `ready` are never taken: its send does not happen.
  const chatId = (await app.node.post('/api/chats', { type: 'direct', userId: users[0]!.userId }, users[CEILING]!.jwt)).body.chatId as string;
  const early = await new Promise<{ code: number; frames: string[] }>((resolve) => {
    const ws = new WebSocket(`${svc.nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(users[CEILING]!.jwt)}`);
    const frames: string[] = [];
    ws.on('open', () => ws.send(JSON.stringify({ type: 'message.send', id: 'early', chatId, content: 'sneaked in' })));
    ws.on('message', (data) => frames.push(String(data)));
    ws.on('close', (code) => resolve({ code, frames }));
  });
  t.equal(early.code, 4010, 'a refused socket that sent at once is closed all the same');
  t.same(early.frames, [], 'its frame got no answer');
  const history = await app.node.get(`/api/messages/getMessages/${chatId}?size=50&lastMessage=`, users[0]!.jwt);
  t.equal(history.status, 200);
  t.same(history.body.messages, [], 'and its send did not happen');
  // An admitted socket's frame sent at once, before `ready`, is taken.
  const quick = await new Promise<string>((resolve) => {
    const ws = new WebSocket(`${svc.nodeUrl.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(users[0]!.jwt)}`);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'ping', id: 'quick' })));
    ws.on('message', (data) => {
      const f = JSON.parse(String(data)) as { type: string; id?: string };
      if (f.id === 'quick') {
        resolve(f.type);
        ws.close();
      }
    });
  });
  t.equal(quick, 'ack', "an admitted socket's frame sent before ready is answered");

  const second = await WsClient.connect(svc.nodeUrl, users[0]!.jwt);
  connected.push(second);
  t.equal((await second.request({ type: 'ping' })).type, 'ack', 'a connected user opens another socket freely');
  for (const c of connected) t.equal(c.closed, undefined, 'nobody connected was touched');

  // users[1] leaves: the refused user gets in, and the one after is refused again.
  await connected[1]!.close();
  let admitted: Awaited<ReturnType<typeof attempt>> | undefined;
  for (let i = 0; i < 20; i++) {
    admitted = await attempt(users[CEILING]!.jwt);
    if (admitted.ready) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.equal(admitted?.ready, true, 'after one leaves, a new user gets in');
  if (admitted?.ready) t.teardown(() => admitted.ws.close());
  t.equal((await attempt(users[CEILING + 1]!.jwt)).ready, false, 'and the ceiling holds again');

  // An application of another account is its own: its users connect.
  const other = await integration(svc, 'ceiling-other');
  const stranger = await WsClient.connect(svc.nodeUrl, (await other.user('s')).jwt);
  connected.push(stranger);
  t.pass("another application's user connects");

  // The operator moves the application to STANDARD: no ceiling.
  const { stdout } = await ctl('app', 'tier', app.appId, 'STANDARD');
  t.match(stdout, /is now STANDARD/);
  t.match((await app.control.get(`/api/client/apps/${app.appId}`, app.accessToken)).body, { tier: 'STANDARD', type: 'STANDARD' }, 'the detail form shows the tier');
  let lifted = false;
  for (let i = 0; i < 20 && !lifted; i++) {
    const next = await attempt(users[CEILING + 1]!.jwt);
    lifted = next.ready;
    if (next.ready) t.teardown(() => next.ws.close());
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.ok(lifted, 'a STANDARD application takes users past the DEMO ceiling');
  await t.rejects(ctl('app', 'tier', app.appId, 'GOLD'), { code: 2 }, 'an unknown tier is a usage error (exit 2)');
});
