import t from 'tap';
import { createLogger } from '../../common/index.ts';
import type { UsageDelta, UsageSink } from '../../common/usage/index.ts';
import { UsageMeter } from '../../node/usage/meter.ts';

// The node's usage meter (node/usage/meter.ts): counts add up in memory, a flush hands one delta
// per application to the store, a failed flush keeps its counts for the next, close flushes the rest.
const log = createLogger('silent', 'test');
const at = new Date('2030-01-01T12:00:00.000Z');

function meter(sink: UsageSink, online: Set<string> = new Set()) {
  return new UsageMeter({ sink, nodeId: 'n1', flushMs: 3_600_000, usersOnline: () => online, localUsers: () => online.size, log, now: () => at });
}

t.test('one flush: one delta per application with everything counted since the last', async (t) => {
  const got: UsageDelta[][] = [];
  const m = meter({ record: async (_node, deltas) => void got.push(deltas) });
  t.teardown(() => m.close());
  m.userRegistered('a');
  m.userRegistered('a');
  m.userDeleted('a');
  m.chatCreated('a');
  m.messagesStored('a', 3);
  m.messagesStored('a', 2);
  m.keyUsed('a', 'k1');
  m.messagesStored('b', 1);
  await m.flush();
  t.same(got, [
    [
      { appId: 'a', users: 1, chats: 1, messages: { '2030-01-01': 5 }, keysUsed: { k1: at.toISOString() } },
      { appId: 'b', users: 0, chats: 0, messages: { '2030-01-01': 1 }, keysUsed: {} },
    ],
  ]);
  await m.flush();
  t.equal(got.length, 1, 'nothing new: nothing written');
});

t.test('a failed flush keeps its counts for the next; nothing is lost or doubled', async (t) => {
  const got: UsageDelta[][] = [];
  let fail = true;
  const m = meter({
    record: async (_node, deltas) => {
      if (fail) throw new Error('store away');
      got.push(deltas);
    },
  });
  t.teardown(() => m.close());
  m.messagesStored('a', 2);
  m.chatCreated('a');
  await m.flush();
  t.same(got, [], 'the store refused');
  m.messagesStored('a', 1);
  fail = false;
  await m.flush();
  t.same(got, [[{ appId: 'a', users: 0, chats: 1, messages: { '2030-01-01': 3 }, keysUsed: {} }]], 'the refused counts and the new ones, once');
});

t.test('concurrent users are sampled when connections change; close flushes what is left', async (t) => {
  const got: UsageDelta[][] = [];
  const online = new Set(['u1', 'u2']);
  const m = meter({ record: async (_node, deltas) => void got.push(deltas) }, online);
  m.connectionsChanged('a');
  await m.flush();
  t.same(got[0]?.[0]?.concurrent, { peaks: { '2030-01-01': 2 }, current: 2, at: at.toISOString() }, 'sampled at the flush');
  online.clear();
  m.connectionsChanged('a');
  m.messagesStored('a', 1);
  await m.close();
  t.same(got[1]?.[0], { appId: 'a', users: 0, chats: 0, messages: { '2030-01-01': 1 }, keysUsed: {}, concurrent: { peaks: { '2030-01-01': 0 }, current: 0, at: at.toISOString() } }, 'the last user left: current 0, counted at close');
  t.equal(got.length, 2);
});

t.test('messages are counted on the UTC day they were stored, across midnight and back', async (t) => {
  const got: UsageDelta[][] = [];
  let now = new Date('2030-01-01T23:59:59.900Z');
  const m = new UsageMeter({ sink: { record: async (_node, deltas) => void got.push(deltas) }, nodeId: 'n1', flushMs: 3_600_000, usersOnline: () => new Set(), localUsers: () => 0, log, now: () => now });
  t.teardown(() => m.close());
  m.messagesStored('a', 2);
  now = new Date('2030-01-02T00:00:00.000Z');
  m.messagesStored('a', 3);
  now = new Date('2030-01-01T23:59:59.999Z'); // a clock stepped back
  m.messagesStored('a', 1);
  now = new Date('2030-01-03T08:00:00.000Z');
  m.messagesStored('a', 4);
  await m.flush();
  t.same(got[0]?.[0]?.messages, { '2030-01-01': 3, '2030-01-02': 3, '2030-01-03': 4 });
});
