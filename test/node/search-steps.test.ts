import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { MessageSearch, SEARCH_LIMITS } from '../../node/search/index.ts';
import { LmdbNodeStore, type NodeStore, type StoredMessage } from '../../node/store/index.ts';

// A page of search reads the driving word's postings a step at a time (message-search.ts): each
// step twice the last, and, when a step cannot fill the page, the next one's postings read while
// its messages are. What the store is asked, in order, is recorded around a real embedded store.
t.test('search steps: a page that needs several reads the next postings early, twice as many; one that fills at once reads no more', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'search-steps-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = LmdbNodeStore.open(dir);
  t.teardown(() => store.close());
  const appId = randomUUID();
  const chats = Array.from({ length: 20 }, () => randomUUID());
  const start = Date.parse('2026-11-30T08:00:00.000Z');
  // Message i in chat i % 20: the first chat holds one message of 20.
  const messages: StoredMessage[] = Array.from({ length: 2_000 }, (_, i) => {
    const at = start + i * 10;
    return { appId, chatId: chats[i % 20]!, id: uuidv7({ msecs: at }), seq: Math.floor(i / 20) + 1, senderId: 'ann', content: `common word${i}`, createdAt: new Date(at).toISOString(), reactions: [] };
  });
  for (let i = 0; i < messages.length; i += 500) await store.messages.put(messages.slice(i, i + 500));
  await store.search.settled();

  const calls: string[] = [];
  const recorded = Object.assign(Object.create(store) as NodeStore, {
    search: {
      postings: (...a: Parameters<NodeStore['search']['postings']>) => {
        calls.push(`postings ${a[3]}`);
        return store.search.postings(...a);
      },
      settled: () => store.search.settled(),
      termsWithPrefix: (...a: Parameters<NodeStore['search']['termsWithPrefix']>) => store.search.termsWithPrefix(...a),
    },
    messages: {
      getMany: (...a: Parameters<NodeStore['messages']['getMany']>) => {
        calls.push('messages');
        return store.messages.getMany(...a);
      },
    },
  });
  const search = new MessageSearch(recorded);
  // A step's messages are read a chat at a time: one entry for each run of them.
  const asked = () => calls.filter((c, i) => c !== calls[i - 1]);
  const backend = { appId, backend: true as const };
  const newestOf = (chatIds: string[], n: number) => messages.filter((m) => chatIds.includes(m.chatId)).reverse().slice(0, n).map((m) => m.content);

  const few = await search.search(backend, 'common', { chatIds: [chats[0]!] }, 20, undefined);
  if ('code' in few) throw new Error(JSON.stringify(few));
  t.same(few.hits.map((h) => h.message.content), newestOf([chats[0]!], 20), 'the newest 20 of the chat, newest first');
  const step = SEARCH_LIMITS.step;
  t.same(asked(), [`postings ${step}`, `postings ${2 * step}`, 'messages'], `a first step of ${step} postings holds 10 of the chat's: the next, of ${2 * step}, is read before its messages`);

  calls.length = 0;
  const all = await search.search(backend, 'common', {}, 20, undefined);
  if ('code' in all) throw new Error(JSON.stringify(all));
  t.same(all.hits.map((h) => h.message.content), newestOf(chats, 20), 'every chat: the newest 20');
  t.same(asked(), [`postings ${step}`, 'messages'], 'the first step fills the page: nothing more is read');
});
