import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { threadLogId, type NodeStore, type StoredMessage } from '../../node/store/index.ts';

/** The search index (README, "Search"): part of the node store conformance suite (see store-conformance.ts). */
export function searchConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  withStore('search index: a message is found by its words, folded, in any script, newest first, by prefix, tenants apart', async (t, store) => {
    const appId = randomUUID();
    const chatId = randomUUID();
    let seq = 0;
    let at = Date.parse('2026-11-29T10:00:00.000Z');
    const message = (content: string, extra: Partial<StoredMessage> = {}): StoredMessage => {
      seq++;
      // Ids 17 minutes apart, across hours (the Cassandra index's buckets).
      at += 17 * 60_000;
      return { appId, chatId, id: uuidv7({ msecs: at }), seq, senderId: 'ann', content, createdAt: new Date(at).toISOString(), reactions: [], ...extra };
    };
    const [m1, m2, m3, m4, m5] = [
      message('Crème brûlée at the CAFÉ tonight'),
      message('我们明天开会'),
      message('party 🎉 tonight'),
      message('東京で会議をします'),
      message('the café is closed tonight'),
    ];
    // What a search waits for before it reads (the embedded store indexes a moment after a put).
    const put = async (messages: StoredMessage[]) => {
      await store.messages.put(messages);
      await store.search.settled();
    };
    await put([m1!, m2!, m3!, m4!, m5!]);
    const ids = async (term: string, range: { before?: string; after?: string } = {}, limit = 10) => (await store.search.postings(appId, term, range, limit)).map((p) => p.messageId);

    t.same(await ids('creme'), [m1!.id], 'a word, folded: crème is creme');
    t.same(await ids('cafe'), [m5!.id, m1!.id], 'café and CAFÉ alike, newest first');
    t.same(await ids('开会'), [m2!.id], 'Chinese without spaces: 开会 in 我们明天开会');
    t.same(await ids('会議'), [m4!.id], 'Japanese: 会議');
    t.same(await ids('🎉'), [m3!.id], 'an emoji');
    t.same(await ids('tonight'), [m5!.id, m3!.id, m1!.id], 'a common word: all three, newest first');
    t.same(await ids('tonight', {}, 2), [m5!.id, m3!.id], 'at most limit');
    t.same(await ids('tonight', { before: m5!.id }), [m3!.id, m1!.id], 'before an id (exclusive)');
    t.same(await ids('tonight', { after: m1!.id }), [m5!.id, m3!.id], 'after an id (exclusive)');
    t.same(await ids('tonight', { before: m5!.id, after: m1!.id }), [m3!.id], 'between two');
    t.same(await ids('absent'), [], 'a word no message has');
    const any = async (terms: string[], range: { before?: string; after?: string } = {}, limit = 10) => (await store.search.postings(appId, terms, range, limit)).map((p) => p.messageId);
    t.same(await any(['closed', 'creme', 'cafe']), [m5!.id, m1!.id], 'any of several words: each message once, newest first');
    t.same(await any(['creme', '🎉', 'absent']), [m3!.id, m1!.id], 'several words, one of them in no message');
    t.same(await any(['tonight', 'cafe'], { before: m5!.id }, 1), [m3!.id], 'several words, in a range, at most limit');
    t.same((await store.search.postings(appId, 'creme', {}, 1))[0], { messageId: m1!.id, logId: chatId }, 'a posting names the log the message is in');
    t.same(await store.search.postings(randomUUID(), 'tonight', {}, 10), [], "another application's index: nothing");

    t.same(await store.search.termsWithPrefix(appId, 'to', 10), ['tonight'], 'terms by prefix');
    t.same(await store.search.termsWithPrefix(appId, 'c', 10), ['cafe', 'closed', 'creme'], 'in order');
    t.same(await store.search.termsWithPrefix(appId, 'c', 2), ['cafe', 'closed'], 'at most limit');
    t.same(await store.search.termsWithPrefix(appId, '会', 10), ['会議'], 'a prefix in any script');
    t.same(await store.search.termsWithPrefix(randomUUID(), 'c', 10), [], "not another application's terms");

    // An edit indexes its new text; a change that keeps the text (a reaction) indexes nothing new.
    await put([{ ...m1!, content: 'Pudding at the bistro', editedAt: new Date(at).toISOString(), rev: 7 }]);
    t.same(await ids('pudding'), [m1!.id], 'an edit: its new words are found');
    await put([{ ...m3!, reactions: [{ reactionId: randomUUID(), userId: 'ben', reaction: '👍', createdAt: new Date(at).toISOString() }], rev: 8 }]);
    t.same(await ids('tonight'), [m5!.id, m3!.id, m1!.id], 'a reaction changes nothing in the index');
    // A deletion adds nothing (readers check each message as stored: a tombstone has no text).
    await put([{ ...m5!, content: '', deletedAt: new Date(at).toISOString(), rev: 9 }]);
    t.same(await ids('closed'), [m5!.id], 'a tombstone adds no words');

    // A reply, in its thread's log: found with that log.
    const log = threadLogId(chatId, m2!.id);
    const reply: StoredMessage = { appId, chatId: log, id: uuidv7({ msecs: at + 60_000 }), seq: 1, senderId: 'ben', content: 'Agenda for the meeting', createdAt: new Date(at + 60_000).toISOString(), reactions: [], parentId: m2!.id };
    await put([reply]);
    t.same(await store.search.postings(appId, 'agenda', {}, 10), [{ messageId: reply.id, logId: log }], "a reply's words, with its thread's log");
  });

  withStore('search index: many messages of a word, put in several batches and out of time order, are paged newest first with none lost or doubled', async (t, store) => {
    const appId = randomUUID();
    const chats = [randomUUID(), randomUUID(), randomUUID()];
    const start = Date.parse('2026-11-29T12:00:00.000Z');
    // 400 messages 250 ms apart (blocks hold up to a second on LMDB), in 3 chats, every one with "alpha",
    // every fifth with "beta"; put in 8 batches in a shuffled order, so older ids are indexed after newer.
    const all = Array.from({ length: 400 }, (_, i): StoredMessage => {
      const at = start + i * 250;
      return { appId, chatId: chats[i % 3]!, id: uuidv7({ msecs: at }), seq: Math.floor(i / 3) + 1, senderId: 'ann', content: i % 5 === 0 ? `alpha beta ${i}` : `alpha ${i}`, createdAt: new Date(at).toISOString(), reactions: [] };
    });
    const order = [...all].sort((a, b) => ((Number(a.content.split(' ').at(-1)) * 7919) % 400) - ((Number(b.content.split(' ').at(-1)) * 7919) % 400));
    for (let i = 0; i < order.length; i += 50) {
      await store.messages.put(order.slice(i, i + 50));
      await store.search.settled();
    }
    // An edit of one message, re-indexed with the same words: still found once.
    await store.messages.put([{ ...all[100]!, content: 'alpha beta edited', editedAt: new Date().toISOString(), rev: 1 }]);
    await store.search.settled();
    const newest = [...all].sort((a, b) => (a.id < b.id ? 1 : -1));
    const paged = async (term: string, size: number, range: { after?: string } = {}) => {
      const out: string[] = [];
      for (let before: string | undefined; ; ) {
        const page = await store.search.postings(appId, term, { ...range, ...(before === undefined ? {} : { before }) }, size);
        out.push(...page.map((p) => p.messageId));
        if (page.length < size) return out;
        before = page.at(-1)!.messageId;
      }
    };
    t.same(await paged('alpha', 7), newest.map((m) => m.id), 'every message once, newest first, in pages of 7');
    t.same(await paged('alpha', 500), newest.map((m) => m.id), 'in one page');
    const betas = newest.filter((m) => m.content.includes('beta') || m.id === all[100]!.id);
    t.same(await paged('beta', 9), betas.map((m) => m.id), 'a rarer word, and the edited message once');
    const after = all[299]!.id;
    t.same(await paged('alpha', 13, { after }), newest.filter((m) => m.id > after).map((m) => m.id), 'after an id, paged');
    const p = (await store.search.postings(appId, 'alpha', {}, 400)).find((x) => x.messageId === all[4]!.id);
    t.same(p, { messageId: all[4]!.id, logId: chats[1] }, 'each posting keeps its log');
  });

  withStore('search index: a word used months apart is found in every message, whatever order they were indexed in, in a range too', async (t, store) => {
    const appId = randomUUID();
    const chatId = randomUUID();
    const now = Date.parse('2026-11-29T12:00:00.000Z');
    const day = 86_400_000;
    // Over a year: the same day, then 40, 95 and 400 days before; indexed newest first (on
    // Cassandra, each adds a day to the word's row in the dictionary).
    const at = [now, now - 3 * 3_600_000, now - 40 * day, now - 95 * day, now - 400 * day];
    const all = at.map((time, i): StoredMessage => ({ appId, chatId, id: uuidv7({ msecs: time }), seq: i + 1, senderId: 'ann', content: i === 4 ? 'wombat quokka' : `wombat ${i}`, createdAt: new Date(time).toISOString(), reactions: [] }));
    for (const m of all) {
      await store.messages.put([m]);
      await store.search.settled();
    }
    const ids = async (term: string, range: { before?: string; after?: string } = {}, limit = 10) => (await store.search.postings(appId, term, range, limit)).map((p) => p.messageId);
    const [m0, m1, m2, m3, m4] = all.map((m) => m.id);
    t.same(await ids('wombat'), [m0, m1, m2, m3, m4], 'every message of the word, newest first');
    t.same(await ids('quokka'), [m4], 'a word of the oldest message alone');
    t.same(await ids('wombat', {}, 2), [m0, m1], 'at most limit');
    t.same(await ids('wombat', { before: m1 }), [m2, m3, m4], 'before an id');
    t.same(await ids('wombat', { after: m3 }), [m0, m1, m2], 'after an id');
    t.same(await ids('wombat', { before: m1, after: m4 }), [m2, m3], 'between two');
    t.same(await ids('quokka', { after: m3 }), [], 'none in the range');
    t.same(await store.search.termsWithPrefix(appId, 'quo', 10), ['quokka'], 'in the dictionary');
  });

  withStore('search index: a cursor over several terms pages through their postings newest first, each message once, across hours and in any page size', async (t, store) => {
    const appId = randomUUID();
    const chats = [randomUUID(), randomUUID()];
    const start = Date.parse('2026-11-29T09:30:00.000Z');
    // 300 messages 20 s apart (over an hour boundary and into a third hour): every one with "common",
    // every fourth with "mid" too, every 37th with "rare" too.
    const all = Array.from({ length: 300 }, (_, i): StoredMessage => {
      const at = start + i * 20_000;
      const words = ['common', ...(i % 4 === 0 ? ['mid'] : []), ...(i % 37 === 0 ? ['rare'] : []), String(i)];
      return { appId, chatId: chats[i % 2]!, id: uuidv7({ msecs: at }), seq: Math.floor(i / 2) + 1, senderId: 'ann', content: words.join(' '), createdAt: new Date(at).toISOString(), reactions: [] };
    });
    for (let i = 0; i < all.length; i += 100) await store.messages.put(all.slice(i, i + 100));
    await store.search.settled();
    const newest = (pick: (m: StoredMessage) => boolean) => all.filter(pick).sort((a, b) => (a.id < b.id ? 1 : -1)).map((m) => m.id);
    const walk = async (terms: string[], sizes: number[], range: { before?: string; after?: string } = {}) => {
      const cursor = store.search.cursor(appId, terms, range);
      const out: string[] = [];
      for (let i = 0; ; i++) {
        const size = sizes[i % sizes.length]!;
        const page = await cursor.next(size);
        t.ok(page.length <= size, 'a page holds at most its limit');
        out.push(...page.map((p) => p.messageId));
        if (page.length < size) return out;
      }
    };
    const has = (m: StoredMessage, w: string) => m.content.split(' ').includes(w);
    t.same(await walk(['common', 'mid', 'rare', 'absent'], [1, 7, 50, 3]), newest(() => true), 'a common word, two rarer ones and one in no message: every message once');
    t.same(await walk(['rare', 'mid'], [5]), newest((m) => has(m, 'mid') || has(m, 'rare')), 'two rarer words, in pages of 5');
    t.same(await walk(['mid'], [11]), newest((m) => has(m, 'mid')), 'one word');
    const [before, after] = [all[250]!.id, all[40]!.id];
    t.same(await walk(['rare', 'mid', 'common'], [13, 2]), newest(() => true), 'in other page sizes, the same');
    t.same(await walk(['rare', 'mid'], [4], { before, after }), newest((m) => (has(m, 'mid') || has(m, 'rare')) && m.id < before && m.id > after), 'within a range');
    const once = store.search.cursor(appId, ['rare'], {});
    t.equal((await once.next(100)).length, 9, 'every message of a word in one page');
    t.same(await once.next(100), [], 'and then nothing');
    t.same(await store.search.cursor(randomUUID(), ['common'], {}).next(10), [], "another application's: nothing");
  });
}
