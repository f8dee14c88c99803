import t from 'tap';
import { integration, startService } from '../helpers/index.ts';

t.test('paging 1,000 messages yields all of them in order, no duplicates, while new ones arrive', async (t) => {
  const svc = await startService({ USER_SENDS_PER_SECOND: '100000', APP_ACTIONS_PER_SECOND: '100000', USER_REQUESTS_PER_SECOND: '100000' });
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chat = await it.node.post('/api/chats', { type: 'group', name: 'paging', memberIds: [bob.userId] }, alice.jwt);
  const chatId = chat.body.chatId as string;
  const sent: string[] = [];
  // 25 at a time: below the load shedder's floor of 32 sends in progress, which a slow machine
  // could otherwise reach (common/limits), so every send is stored.
  for (let i = 0; i < 1000; i += 25) {
    const batch = await Promise.all(Array.from({ length: 25 }, (_, j) => it.node.post(`/api/messages/${chatId}`, { content: `m${i + j}` }, alice.jwt)));
    for (const r of batch) t.equal(r.status, 201, r.status === 201 ? 'sent' : r.text);
    sent.push(...batch.map((r) => r.body.message.messageId as string));
  }

  for (const size of [50, undefined]) {
    // Keep sending while paging: new messages must not show up in older pages or shift them.
    let writing = true;
    let late = 0;
    const writer = (async () => {
      while (writing) if ((await it.node.post(`/api/messages/${chatId}`, { content: 'late' }, bob.jwt)).status === 201) late++;
    })();
    const first = await it.node.get(`/api/messages/getMessages/${chatId}${size ? `?size=${size}` : ''}`, alice.jwt);
    t.equal(first.status, 200);
    const seen: { id: string; seq: number }[] = first.body.messages.map((m: { messageId: string; seq: number }) => ({ id: m.messageId, seq: m.seq }));
    t.equal(first.body.messages.length, size ?? 50, 'default page size is 50');
    let cursor = seen.at(-1)!.id;
    for (;;) {
      const page = await it.node.get(`/api/messages/getMessages/${chatId}?${size ? `size=${size}&` : ''}lastMessage=${cursor}`, alice.jwt);
      t.equal(page.status, 200);
      if (page.body.messages.length === 0) break;
      for (const m of page.body.messages) seen.push({ id: m.messageId, seq: m.seq });
      cursor = seen.at(-1)!.id;
    }
    writing = false;
    await writer;
    t.ok(late > 0, `size=${size}: messages arrived while paging (${late})`);
    const seqs = seen.map((s) => s.seq);
    t.same(seqs, [...seqs].sort((a, b) => b - a), `size=${size}: newest first`);
    t.equal(new Set(seen.map((s) => s.id)).size, seen.length, `size=${size}: no duplicates`);
    t.equal(seqs.at(-1), 1, 'reaches the first message');
    t.same(seqs, Array.from({ length: seqs[0]! }, (_, i) => seqs[0]! - i), `size=${size}: no gaps`);
    const ids = new Set(seen.map((s) => s.id));
    t.ok(sent.every((id) => ids.has(id)), `size=${size}: every one of the 1,000 messages`);
  }

  const empty = await it.node.get(`/api/messages/getMessages/${chatId}?size=5&lastMessage=`, alice.jwt);
  t.equal(empty.status, 200);
  t.equal(empty.body.messages.length, 5, 'an empty lastMessage means from the newest');
});
