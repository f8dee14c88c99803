import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { v7 as uuidv7 } from 'uuid';
import { EventIds } from '../../common/webhooks/index.ts';
import type { NodeStore, OutboxEvent, StoredMessage } from '../../node/store/index.ts';
import { NOW } from '../helpers/fixed-clock.ts';

/** The WebhookOutbox part of the node store conformance suite (see store-conformance.ts). */
export function outboxConformance(withStore: (title: string, body: (t: Test, store: NodeStore) => Promise<void>) => void): void {
  const ids = new EventIds();
  const events = (appId: string, n: number): OutboxEvent[] =>
    Array.from({ length: n }, (_, i) => {
      const id = ids.next();
      return { id, appId, type: 'message.new', body: JSON.stringify({ type: 'message.new', id, n: i }) };
    });

  withStore('outbox: events come back in id order, from a bound, at most a limit, per owner', async (t, store) => {
    const [owner, other] = [`node-${randomUUID()}`, `node-${randomUUID()}`];
    const appId = randomUUID();
    const made = events(appId, 5);
    await store.outbox.append(owner, made.slice(0, 3));
    await store.outbox.append(owner, made.slice(3));
    await store.outbox.append(other, events(appId, 1));
    const all = await store.outbox.pending(owner, undefined, 100);
    t.same(all, made.map((event) => ({ event, done: [] })), 'every field read back, oldest first');
    t.same((await store.outbox.pending(owner, made[2]!.id, 100)).map((p) => p.event.id), made.slice(2).map((e) => e.id), 'from a bound, inclusive');
    t.same((await store.outbox.pending(owner, undefined, 2)).map((p) => p.event.id), made.slice(0, 2).map((e) => e.id), 'at most the limit');
    t.equal((await store.outbox.pending(other, undefined, 100)).length, 1, "another owner's events are its own");
    t.ok((await store.outbox.owners()).includes(owner) && (await store.outbox.owners()).includes(other), 'both owners are listed');
  });

  withStore('outbox: finished events do not come back; partial ones keep their done endpoints; the low mark finishes what is below it', async (t, store) => {
    const owner = `node-${randomUUID()}`;
    const made = events(randomUUID(), 6);
    await store.outbox.append(owner, made);
    const check = { chatId: randomUUID(), messageId: randomUUID(), rev: 7 };
    const withCheck: OutboxEvent = { ...events(made[0]!.appId, 1)[0]!, check };
    await store.outbox.append(owner, [withCheck]);
    await store.outbox.progress(owner, [made[0]!.id, made[1]!.id, made[3]!.id], [{ event: made[2]!, done: ['endpoint-a'] }]);
    const left = await store.outbox.pending(owner, undefined, 100);
    t.same(left.map((p) => p.event.id), [made[2]!.id, made[4]!.id, made[5]!.id, withCheck.id], 'finished events are gone, the rest in order');
    t.same(left[0]!.done, ['endpoint-a'], 'a partial event keeps the endpoints done with it');
    t.same(left.at(-1)!.event.check, check, 'the check of an event written before its change is kept');
    await store.outbox.progress(owner, [made[2]!.id, made[4]!.id, made[5]!.id, withCheck.id], [], ids.floor());
    t.same(await store.outbox.pending(owner, undefined, 100), [], 'all finished, below the mark');
    const later = events(made[0]!.appId, 2);
    await store.outbox.append(owner, later);
    await store.outbox.progress(owner, [], [], later[1]!.id);
    t.same((await store.outbox.pending(owner, undefined, 100)).map((p) => p.event.id), [later[1]!.id], 'events below the mark are finished, even unnamed');
    await store.outbox.progress(owner, [later[1]!.id], []);
    await store.outbox.retire(owner);
    t.notOk((await store.outbox.owners()).includes(owner), 'a retired owner with nothing left is not listed');
  });

  withStore('outbox: unfinished events are found behind many finished ones', async (t, store) => {
    const owner = `node-${randomUUID()}`;
    const made = events(randomUUID(), 200);
    await store.outbox.append(owner, made);
    await store.outbox.progress(owner, made.slice(0, 190).map((e) => e.id), []);
    t.same((await store.outbox.pending(owner, undefined, 5)).map((p) => p.event.id), made.slice(190, 195).map((e) => e.id), 'the first five unfinished, past 190 finished');
    t.same((await store.outbox.pending(owner, made[100]!.id, 100)).map((p) => p.event.id), made.slice(190).map((e) => e.id), 'from a bound among the finished ones too');
  });

  withStore('outbox: a put writes its events with its messages; once it resolves both are durable', async (t, store) => {
    const appId = randomUUID();
    const chatId = randomUUID();
    const m: StoredMessage = { appId, chatId, id: uuidv7(), seq: 1, senderId: randomUUID(), content: 'with event', createdAt: NOW, reactions: [], rev: 1 };
    const [event] = events(appId, 1);
    await store.messages.put([m], { from: { seq: 0, rev: 0 }, to: { seq: 1, rev: 1 } }, [{ ...event!, check: { chatId, messageId: m.id, rev: 1 } }]);
    const pending = await store.outbox.pending(store.writers.self.id, undefined, 10);
    t.same(pending.map((p) => p.event.id), [event!.id], "the event is in the writer's outbox");
    t.same(await store.messages.get(appId, chatId, m.id), m, 'and the message is stored');
  });
}
