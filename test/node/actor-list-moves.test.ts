import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ChatActor, type SendResult } from '../../node/chat/actor.ts';
import type { EventSink } from '../../node/chat/events.ts';
import { CHAT_LIMITS } from '../../node/chat/limits.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

/**
 * A chat's moves in its members' lists are paced (list-moves.ts): each costs a row per member (on
 * Cassandra, on every replica). Seen from the store: which activity writes carried the members (moved
 * the lists) and which only rewrote the row.
 */
const STEP_MS = 2500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup(listMoveMs: number | undefined) {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const { chat, ids } = fake.groupChat(appId, 3, new Date(Date.now() - 60_000).toISOString());
  const sink: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined };
  const actor = new ChatActor(appId, chat.id, { store: fake.store, events: sink, now: () => new Date(), ...(listMoveMs === undefined ? {} : { listMoveMs }) });
  const started = performance.now();
  const writes: { at: number; moved: boolean; lastActivityAt: string }[] = [];
  const record = fake.store.chats.writeActivity;
  fake.store.chats.writeActivity = (c, userIds, previousAt) => {
    writes.push({ at: performance.now() - started, moved: userIds.length > 0, lastActivityAt: c.lastActivityAt });
    return record(c, userIds, previousAt);
  };
  return { actor, ids, writes };
}

async function sendEvery(actor: ChatActor, sender: string, n: number, gapMs: number): Promise<SendResult[]> {
  const sent: SendResult[] = [];
  for (let i = 0; i < n; i++) {
    sent.push((await actor.send(sender, { content: `m${i}` })) as SendResult);
    await sleep(gapMs);
  }
  return sent;
}

t.test('list moves: a quiet chat moves at its first message; a busy one at most once per step, then catches up with its latest message by itself', async (t) => {
  const { actor, ids, writes } = setup(STEP_MS);
  t.ok(await actor.load());
  const sent = await sendEvery(actor, ids[0]!, 6, 300);
  const first = sent[0]!.message;
  const last = sent.at(-1)!.message;
  const moves = () => writes.filter((w) => w.moved);
  t.equal(moves()[0]?.lastActivityAt, first.timeStamp, 'the first write moves the lists to the first message');
  t.ok(moves()[0]!.at < STEP_MS / 2, `at once, not a step later (${Math.round(moves()[0]!.at)} ms)`);
  t.ok(writes.some((w) => !w.moved && w.lastActivityAt > first.timeStamp), 'a later write within the step rewrote the row alone');
  // Nothing more is sent: the move that was held back comes by itself, once the step is over.
  await sleep(STEP_MS + 500);
  const all = moves();
  t.ok(all.length >= 2, `moved again without a message to carry it (${all.length} moves in ${writes.length} activity writes)`);
  t.equal(all.at(-1)!.lastActivityAt, last.timeStamp, 'to the latest message');
  const gaps = all.slice(1).map((m, i) => Math.round(m.at - all[i]!.at));
  t.ok(gaps.every((gap) => gap >= STEP_MS - 50), `moves at least a step apart (${gaps.join(', ')} ms)`);
  t.ok(writes.length > all.length, 'more activity writes than moves');
});

t.test('list moves: a drained actor (evicted, or its node stopping) moves the lists to its last activity at once', async (t) => {
  const { actor, ids, writes } = setup(60_000);
  t.ok(await actor.load());
  await actor.send(ids[0]!, { content: 'first' });
  await sleep(1100);
  const last = (await actor.send(ids[1]!, { content: 'second' })) as SendResult;
  await sleep(50);
  t.equal(writes.filter((w) => w.moved).length, 1, 'the second message did not move the lists (within the step)');
  const before = performance.now();
  await actor.drain();
  const moves = writes.filter((w) => w.moved);
  t.equal(moves.length, 2, 'the drain moved them');
  t.equal(moves[1]!.lastActivityAt, last.message.timeStamp, 'to the last message');
  t.ok(performance.now() - before < 1500, 'without waiting for the step');
});

t.test('list moves: by default (every store) a busy chat moves at its first message, then at most once per CHAT_LIMITS.listMoveMs', async (t) => {
  const { actor, ids, writes } = setup(undefined);
  t.ok(await actor.load());
  await sendEvery(actor, ids[0]!, 5, 300);
  await sleep(CHAT_LIMITS.activityWriteMs + 200);
  t.ok(writes.length >= 2, `${writes.length} activity writes`);
  t.equal(writes.filter((w) => w.moved).length, 1, 'the first moved the lists, the rest rewrote the row alone');
  t.ok(writes[0]!.moved, 'the first write moved them');
  t.equal(CHAT_LIMITS.listMoveMs, 10_000, 'at most every 10 s, as the README says');
  await actor.drain();
});
