import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { Bus, BusPayload, BusTopic } from '../../node/bus/index.ts';

/**
 * The behaviour every Bus implementation must show, written once against node/bus/bus.ts. `open`
 * makes `n` connected buses (nodes) on a fresh namespace, `subscribers(topic)` says how many nodes
 * the transport itself counts as subscribed (Redis: PUBSUB NUMSUB), and `close` ends them all.
 */
export interface OpenedBuses {
  buses: Bus[];
  subscribers: (topic: BusTopic) => Promise<number>;
  close: () => Promise<void>;
}

const chat = (): BusTopic => ({ kind: 'chat', appId: randomUUID(), chatId: randomUUID() });
const user = (): BusTopic => ({ kind: 'user', appId: randomUUID(), userId: randomUUID() });
const text = (payload: BusPayload) => (typeof payload === 'string' ? payload : `bytes:${Buffer.from(payload).toString('hex')}`);

/** Collects what arrives on a topic and resolves `until(count)` once that many have arrived. */
function collector(bus: Bus, topic: BusTopic) {
  const got: string[] = [];
  const origins: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const off = bus.subscribe(topic, (payload, origin) => {
    got.push(text(payload));
    origins.push(origin);
    for (const w of waiters) if (got.length >= w.count) w.resolve();
  });
  const until = (count: number, ms = 5_000) =>
    new Promise<void>((resolve, reject) => {
      if (got.length >= count) return resolve();
      const timer = setTimeout(() => reject(new Error(`${bus.nodeId} got ${got.length} of ${count}: ${got.slice(-3).join(', ')}`)), ms);
      waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  return { got, origins, off, until };
}

const allReady = (buses: Bus[]) => Promise.all(buses.map((bus) => bus.ready()));

export function busConformance(t: Test, name: string, open: (n: number) => Promise<OpenedBuses>): void {
  const withBuses = (title: string, n: number, body: (t: Test, o: OpenedBuses) => Promise<void>) =>
    t.test(`${name}: ${title}`, async (t) => {
      const opened = await open(n);
      t.teardown(opened.close);
      await body(t, opened);
    });

  withBuses('every other subscribed node gets each publication exactly once; the publisher none', 3, async (t, { buses }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const topic = chat();
    const [onA, onB, onC] = [collector(a, topic), collector(b, topic), collector(c, topic)];
    await allReady(buses);
    a.publish(topic, 'from a');
    b.publish(topic, 'from b');
    await Promise.all([onA.until(1), onB.until(1), onC.until(2)]);
    // A marker from c: it travels behind anything duplicated, so once it is in, duplicates would be too.
    c.publish(topic, 'marker');
    await Promise.all([onA.until(2), onB.until(2)]);
    await allReady(buses);
    t.same(onA.got, ['from b', 'marker']);
    t.same(onB.got, ['from a', 'marker']);
    t.same([...onC.got].sort(), ['from a', 'from b']);
    t.same(onA.origins, [b.nodeId, c.nodeId], 'handlers learn the origin node');
    t.equal(a.stats().crossings, 3, "a's publication crossed the transport once per subscribed node (itself included)");
    t.equal(a.stats().echoesDropped, 1, 'and its own copy was dropped on arrival');
  });

  withBuses('only interested nodes receive; a topic nobody follows crosses to nobody', 3, async (t, { buses, subscribers }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const [followed, other, unfollowed] = [chat(), chat(), chat()];
    const onB = collector(b, followed);
    const onCOther = collector(c, other);
    await allReady(buses);
    t.equal(await subscribers(followed), 1, 'one node subscribed to the chat at the transport');
    t.equal(await subscribers(unfollowed), 0);
    const receivedByC = c.stats().received;
    a.publish(followed, 'x');
    a.publish(unfollowed, 'nobody');
    await onB.until(1);
    a.publish(other, 'marker');
    await onCOther.until(1);
    await a.ready();
    t.same(onCOther.got, ['marker'], 'c got nothing of the chat it does not follow');
    t.equal(c.stats().received, receivedByC + 1, 'not even a frame to drop: only the marker reached c');
    t.equal(a.stats().crossings, 2, 'one copy to b, one to c, none for the unfollowed chat');
    t.equal(a.stats().published, 3);
  });

  withBuses('per-publisher order of 1,000 publications; bytes stay bytes, strings stay strings', 2, async (t, { buses }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    const got: BusPayload[] = [];
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    b.subscribe(topic, (payload) => {
      got.push(payload);
      if (got.length === 1003) done();
    });
    await b.ready();
    for (let i = 0; i < 1000; i++) a.publish(topic, `${i}`);
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    a.publish(topic, binary);
    a.publish(topic, new Uint8Array(0));
    a.publish(topic, 'é✓😀');
    binary.fill(0); // the bus copied it at publish(): the publisher may reuse its buffer
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`got ${got.length}`)), 10_000)))]);
    clearTimeout(timer);
    t.same(got.slice(0, 1000), Array.from({ length: 1000 }, (_, i) => `${i}`), 'in publish order');
    t.ok(got[1000] instanceof Uint8Array && got[1001] instanceof Uint8Array, 'bytes arrive as bytes');
    t.same([...(got[1000] as Uint8Array)], Array.from({ length: 256 }, (_, i) => i), 'every byte value survives');
    t.equal((got[1001] as Uint8Array).length, 0, 'an empty payload is delivered, empty');
    t.equal(got[1002], 'é✓😀', 'strings arrive as strings, UTF-8 intact');
  });

  withBuses('subscriptions are reference counted', 2, async (t, { buses, subscribers }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    const first = collector(b, topic);
    const second = collector(b, topic);
    const third: string[] = [];
    const handler = (p: BusPayload) => void third.push(text(p));
    b.subscribe(topic, handler);
    await b.ready();
    t.equal(await subscribers(topic), 1, 'three local handlers, one transport subscription');
    first.off();
    first.off(); // idempotent: must not remove another subscription
    b.unsubscribe(topic, handler);
    await b.ready();
    t.equal(await subscribers(topic), 1, 'still subscribed while a handler remains');
    a.publish(topic, 'one');
    await second.until(1);
    t.same([first.got, third], [[], []], 'removed handlers get nothing');
    second.off();
    await b.ready();
    t.equal(await subscribers(topic), 0, 'unsubscribed at the transport with the last handler');
    // Nothing arrives after the last unsubscribe. A marker published next on another topic bounds
    // the wait: both transports deliver one publisher's frames to a node in publish order.
    const marker = user();
    const onMarker = collector(b, marker);
    await b.ready();
    const received = b.stats().received;
    a.publish(topic, 'late');
    a.publish(marker, 'marker');
    await onMarker.until(1);
    t.same(second.got, ['one']);
    t.equal(b.stats().received, received + 1, "only the marker reached b, not even a frame to drop for the topic it left");
  });

  withBuses('unsubscribe then subscribe again at once ends subscribed (transport commands keep their order)', 2, async (t, { buses, subscribers }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    b.subscribe(topic, () => undefined)();
    const again = collector(b, topic);
    await b.ready();
    t.equal(await subscribers(topic), 1);
    a.publish(topic, 'still here');
    await again.until(1);
    t.same(again.got, ['still here']);
  });

  withBuses('control messages reach every other node; user topics are apart from chat topics', 3, async (t, { buses }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const control = { kind: 'control' } as const;
    const [onAControl, onB, onC] = [collector(a, control), collector(b, control), collector(c, control)];
    const appId = randomUUID();
    const id = randomUUID();
    const onUser = collector(b, { kind: 'user', appId, userId: id });
    const onChat = collector(c, { kind: 'chat', appId, chatId: id });
    await allReady(buses);
    a.publish(control, 'revoke');
    a.publish({ kind: 'user', appId, userId: id }, 'to user');
    a.publish({ kind: 'chat', appId, chatId: id }, 'to chat');
    await Promise.all([onB.until(1), onC.until(1), onUser.until(1), onChat.until(1)]);
    b.publish(control, 'marker');
    await Promise.all([onAControl.until(1), onC.until(2)]);
    t.same([onB.got, onC.got, onUser.got, onChat.got], [['revoke'], ['revoke', 'marker'], ['to user'], ['to chat']]);
    t.same(onAControl.got, ['marker'], 'the publisher of a control message does not get it back');
  });

  withBuses('a throwing handler is counted and does not keep the event from the others', 2, async (t, { buses }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    b.subscribe(topic, () => {
      throw new Error('handler bug');
    });
    const after = collector(b, topic);
    await b.ready();
    a.publish(topic, 'x');
    await after.until(1);
    t.equal(b.stats().handlerErrors, 1);
  });

  withBuses('close(): the node leaves every topic; publish and subscribe then do nothing', 2, async (t, { buses, subscribers }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    collector(b, topic);
    await b.ready();
    t.equal(await subscribers(topic), 1);
    await b.close();
    await b.close(); // idempotent
    t.equal(await subscribers(topic), 0, 'no transport subscription left');
    b.publish(topic, 'after close');
    b.subscribe(topic, () => t.fail('no delivery after close'))();
    t.equal(b.stats().published, 0);
    await a.ready();
    await b.ready();
  });
}

