import t from 'tap';
import { integration, startService } from '../helpers/index.ts';
import { LocalPushService } from '../helpers/push-service.ts';
import { pushPeersEnv } from '../helpers/push-peers.ts';

/**
 * PUSH_CHAT_INTERVAL_MS (README, "Push notifications"): how far apart a device's pushes of one chat
 * start. Messages sent 300 ms apart, each after the push before it has arrived: with 0 each is
 * pushed; with 2 seconds only the first and the newest are, the newest when the time is up.
 */
for (const [interval, want] of [
  ['0', ['m0', 'm1', 'm2', 'm3']],
  ['2000', ['m0', 'm3']],
] as const) {
  t.test(`PUSH_CHAT_INTERVAL_MS=${interval}`, async (t) => {
    const pushService = await new LocalPushService().start();
    t.teardown(() => pushService.stop());
    const svc = await startService({ ...pushPeersEnv({ webPush: pushService }), PUSH_CHAT_INTERVAL_MS: interval });
    t.teardown(() => svc.stop());
    const it = await integration(svc, 'interval');
    t.equal((await it.control.put(`/api/client/apps/${it.appId}/push/web-push`, { subject: 'mailto:ops@example.com' }, it.accessToken)).status, 200);
    const [alice, bob] = [await it.user('alice'), await it.user('bob')];
    const sub = pushService.subscribe();
    t.equal((await it.node.post('/api/push/devices', { webPush: { endpoint: sub.endpoint, keys: sub.keys } }, bob.jwt)).status, 201);
    const chatId = (await it.node.post('/api/chats', { type: 'direct', userId: bob.userId }, alice.jwt)).body.chatId as string;
    const texts = () => pushService.received.map((p) => (JSON.parse(p.payload) as { text: string }).text);
    for (let i = 0; i < 4; i++) {
      const count = pushService.received.length;
      t.equal((await it.node.post(`/api/messages/${chatId}`, { content: `m${i}` }, alice.jwt)).status, 201);
      // With 0 each push is awaited, so the next message finds its lane free; else only the first (the interval then runs).
      if (i === 0 || interval === '0') await pushService.until((r) => r.length > count, 5_000);
      await new Promise((r) => setTimeout(r, 300));
    }
    await pushService.until(() => texts().at(-1) === 'm3', 5_000);
    await new Promise((r) => setTimeout(r, 500));
    t.same(texts(), want, `pushed: ${texts().join(', ')}`);
    if (interval !== '0') {
      const last = pushService.received.at(-1)!;
      t.ok(last.at - pushService.received[0]!.at >= 1_000, `the newest made once the interval was up (${last.at - pushService.received[0]!.at} ms)`);
    }
  });
}
