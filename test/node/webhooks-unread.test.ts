import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { pino } from 'pino';
import type { MessageView } from '../../node/chat/index.ts';
import { LmdbNodeStore, type Chat, type Member } from '../../node/store/index.ts';
import { NodeWebhooks } from '../../node/webhooks/hooks.ts';
import type { HookEndpoint } from '../../node/webhooks/source.ts';

// `message.unread` goes to the members a chat had when its message became durable. With a
// cluster, who is online is read from the bus (a promise): a member who joins in the meantime must
// not get an event for a message sent before they joined.
t.test('message.unread: the members when the message was stored, even when who is online comes later', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'unread-'));
  const store = LmdbNodeStore.open(dir);
  const appId = randomUUID();
  const chatId = randomUUID();
  const [sender, bob, carol] = ['sender', 'bob', 'carol'];
  const now = new Date().toISOString();
  const member = (userId: string): Member => ({ appId, chatId, userId, role: 'member', joinedAt: now, readSeq: 0 });
  const chat: Chat = { appId, id: chatId, kind: 'group', name: 'g', createdBy: sender, createdAt: now, updatedAt: now, lastSeq: 1, lastActivityAt: now, memberCount: 3 };
  // Carol is in the store too (she joined right after the message), so only the list handed to
  // `stored` decides whether she gets an event.
  await store.chats.create(chat, [member(sender), member(bob), member(carol)]);
  const endpoint: HookEndpoint = { id: randomUUID(), appId, url: 'http://127.0.0.1:9/hooks', events: ['message.unread'], status: 'ACTIVE', secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXQ=', createdAt: now, updatedAt: now };
  let online!: (users: ReadonlySet<string>) => void;
  let asked!: () => void;
  const askedOnline = new Promise<void>((resolve) => (asked = resolve));
  const webhooks = new NodeWebhooks({
    store,
    source: { list: async () => [endpoint], get: async () => endpoint, update: async () => 'updated', recordDeliveries: async () => {} },
    usersOnline: () =>
      new Promise((resolve) => {
        online = resolve;
        asked();
      }),
    adopts: () => false,
    changed: () => {},
    allowInsecure: true,
    unreadWindowMs: 60_000,
    cacheTtlMs: 60_000,
    log: pino({ level: 'silent' }),
  });
  t.teardown(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  const message = { chatId, messageId: randomUUID(), senderId: sender, content: 'hi', timeStamp: now, edited: false, seq: 1, deleted: false, reactions: [], reactionCounts: {}, type: 'regular' as const } as MessageView;
  const members = new Map([sender, bob].map((id) => [id, member(id)]));
  webhooks.stored(appId, chatId, [message], members);
  // Carol joins while who is online is still being read.
  members.set(carol, member(carol));
  await askedOnline;
  online(new Set());
  await new Promise((resolve) => setImmediate(resolve));
  await webhooks.close();

  const unread = (await store.outbox.pending(store.writers.self.id, undefined, 100)).filter((p) => p.event.type === 'message.unread');
  const to = unread.map((p) => (JSON.parse(p.event.body) as { data: { userId: string } }).data.userId).sort();
  t.same(to, [bob], 'bob, offline and a member when it was stored, gets one; carol, who joined after, none');
});
