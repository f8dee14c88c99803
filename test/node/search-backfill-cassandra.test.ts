import { randomUUID } from 'node:crypto';
import t from 'tap';
import { migrate, type CassandraClient } from '../../common/cassandra/index.ts';
import { CassandraNodeStore, newMessageId, nodeMigrations, threadLogId, type StoredMessage } from '../../node/store/index.ts';
import { backfillSearch, reindexSearch } from '../../node/store/cassandra/search-backfill.ts';
import { requireService, testKeyspace } from '../helpers/index.ts';

// Cassandra's backfill of the search index (migration node-026, search-backfill.ts): messages
// written while nothing indexed them are found after it, and a run stopped or failed goes on from
// its last save.

const cassandra = await requireService('cassandra', (line) => t.comment(line));
if (!cassandra) t.skip('cassandra not running', () => undefined);
else {
  let at = Date.parse('2026-03-01T09:00:00.000Z');
  const message = (appId: string, chatId: string, seq: number, content: string, extra: Partial<StoredMessage> = {}): StoredMessage => {
    at += 61_000;
    return { appId, chatId, id: newMessageId(seq, at), seq, senderId: 'ann', content, createdAt: new Date(at).toISOString(), reactions: [], rev: seq, ...extra };
  };
  const progressRow = async (client: CassandraClient, keyspace: string) => {
    const row = (await client.execute(`SELECT last_token, messages, done FROM ${keyspace}.search_backfill WHERE name = 'day_hours'`)).first();
    return { lastToken: row.get('last_token')?.toString() as string | undefined, messages: Number(row.get('messages')), done: row.get('done') as boolean };
  };
  /** A keyspace migrated as a new one, and a store of it that indexes nothing (SEARCH_INDEX=off). */
  const fresh = async (t: Parameters<typeof testKeyspace>[0], name: string) => {
    const { client, keyspace } = await testKeyspace(t, cassandra, name);
    await migrate(client, keyspace, nodeMigrations);
    const off = new CassandraNodeStore(client, keyspace, undefined, undefined, { searchIndex: false });
    const on = CassandraNodeStore.open(client, keyspace);
    const ids = async (appId: string, term: string) => (await on.search.postings(appId, term, {}, 100)).map((p) => p.messageId).sort();
    return { client, keyspace, off, on, ids };
  };

  t.test('cassandra: the backfill indexes the messages written with the index off; a run stopped goes on from its save', async (t) => {
    const { client, keyspace, off, on, ids } = await fresh(t, 'search_backfill');
    t.same(await progressRow(client, keyspace), { lastToken: '-9223372036854775808', messages: 0, done: true }, 'the migration ran on a new keyspace: nothing to index, done');

    const [appId, otherApp, c1, c2] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const first = message(appId, c1, 1, 'Apple and banana');
    const cherry = message(appId, c1, 2, 'cherry pie');
    const durian = message(appId, c2, 1, 'an apple, a durian');
    const reply = message(appId, threadLogId(c1, first.id), 1, 'elderberry apple', { parentId: first.id });
    const ghost = message(appId, c2, 2, 'ghostword');
    const phantom = message(appId, c2, 3, 'phantom words', { deletedAt: new Date(at).toISOString() });
    const tenant = message(otherApp, randomUUID(), 1, 'apple of another tenant');
    // Chats of one message each: partitions enough for a run to stop between two of them.
    const many = Array.from({ length: 12 }, (_, i) => message(appId, randomUUID(), 1, `many word${i}`));
    await off.messages.put([first, cherry]);
    await off.messages.put([durian, ghost, phantom]);
    await off.messages.put([reply]);
    await off.messages.put([tenant]);
    for (const m of many) await off.messages.put([m]);
    await off.messages.put([{ ...ghost, content: '', deletedAt: new Date(at).toISOString(), rev: 9 }]);
    t.same(await ids(appId, 'apple'), [], 'written with the index off: not found');
    const indexable = 5 + many.length;

    const done = await reindexSearch(client, keyspace);
    t.match(done, { messages: indexable, messagesNow: indexable, done: true, resumed: false }, 'every message with text, deleted ones left out');
    t.same(await ids(appId, 'apple'), [first.id, durian.id, reply.id].sort(), "old messages of both chats and a thread's reply are found");
    t.same(await on.search.postings(appId, 'elderberry', {}, 10), [{ messageId: reply.id, logId: reply.chatId }], "a reply's posting names its thread's log");
    t.same(await ids(appId, 'ghostword'), [], 'a deleted message is not indexed');
    t.same(await ids(appId, 'phantom'), [], 'nor one marked deleted that kept its text');
    t.same(await ids(otherApp, 'apple'), [tenant.id], "another application's message, in its own index");
    t.same(await on.search.termsWithPrefix(appId, 'dur', 10), ['durian'], 'its words are in the dictionary, for prefixes');
    t.match(await backfillSearch(client, keyspace), { messagesNow: 0, done: true }, 'once done, a run (the migration again) reads nothing');

    // Stopped at the first save after 4 messages (a save every 3 rows, at a partition's end).
    const saves: string[] = [];
    const stopped = await reindexSearch(client, keyspace, { checkpointRows: 3, limit: 4, onProgress: (p) => saves.push(p.lastToken!) });
    t.equal(stopped.done, false, 'a run stopped early is not done');
    t.ok(stopped.messagesNow >= 4 && stopped.messagesNow < indexable, `it indexed part of the table (${stopped.messagesNow} of ${indexable})`);
    t.same(await progressRow(client, keyspace), { lastToken: stopped.lastToken, messages: stopped.messagesNow, done: false }, 'its progress is saved: the last token done, the messages');
    t.equal(saves.at(-1), stopped.lastToken, 'as reported');
    const rest = await backfillSearch(client, keyspace, { checkpointRows: 3 });
    t.match(rest, { resumed: true, done: true, messagesNow: indexable - stopped.messagesNow, messages: indexable }, 'the next run went on from the saved token: every message once over both runs');
    for (const [i, m] of many.entries()) t.same(await ids(appId, `word${i}`), [m.id], `word${i}`);
  });

  t.test('cassandra: a run that dies in the middle of a partition goes on from the last saved token, that partition again', async (t) => {
    const { client, keyspace, off, ids } = await fresh(t, 'search_backfill_kill');
    const appId = randomUUID();
    // Four partitions of six messages (four chats), each message one batch of its search rows.
    const chats = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const messages = chats.flatMap((chatId, c) => Array.from({ length: 6 }, (_, i) => message(appId, chatId, i + 1, `term${c * 6 + i} all`)));
    for (const chatId of chats) await off.messages.put(messages.filter((m) => m.chatId === chatId));

    // A client whose writes fail from the 15th message on: the third message of the third
    // partition read, as a process killed there would leave it.
    let batches = 0;
    const dying = new Proxy(client, {
      get(target, name) {
        if (name === 'batch') return (...args: Parameters<CassandraClient['batch']>) => (++batches >= 15 ? Promise.reject(new Error('killed')) : target.batch(...args));
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await t.rejects(reindexSearch(dying, keyspace, { checkpointRows: 1 }), /killed/, 'the run fails');
    const saved = await progressRow(client, keyspace);
    t.same([saved.messages, saved.done], [12, false], 'its last save: after the second partition (saved at every partition end), not the writes after it');

    const rest = await backfillSearch(client, keyspace, { checkpointRows: 1 });
    t.match(rest, { resumed: true, done: true, messagesNow: 12, messages: 24 }, 'the next run read the last two partitions only, the third again from its first row');
    for (const [i, m] of messages.entries()) t.same(await ids(appId, `term${i}`), [m.id], `term${i}`);
    t.equal((await ids(appId, 'all')).length, 24, 'every message, each once');
  });
}
