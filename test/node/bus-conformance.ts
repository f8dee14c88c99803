import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { Bus, BusTopic } from '../../node/bus/index.ts';

/**
 * The behaviour every Bus implementation must show, written once against node/bus/bus.ts. `open`
 * makes `n` connected buses (nodes), `subscribers(topic)` says how many nodes the transport counts
 * as subscribed, and `close` ends them all.
 */
export interface OpenedBuses {
  buses: Bus[];
  subscribers: (topic: BusTopic) => Promise<number>;
  close: () => Promise<void>;
}

const chat = (): BusTopic => ({ kind: 'chat', appId: randomUUID(), chatId: randomUUID() });
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (payload: Uint8Array) => new TextDecoder().decode(payload);

/** Collects payloads and resolves once `count` have arrived (or rejects after `ms`). */
function collector(bus: Bus, topic: BusTopic) {
  const got: string[] = [];
  let waiter: { count: number; resolve: () => void } | undefined;
  const off = bus.subscribe(topic, (p) => {
    got.push(text(p));
    if (waiter && got.length >= waiter.count) waiter.resolve();
  });
  return {
    got,
    off,
    until: (count: number, ms = 5000) =>
      got.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`got ${got.length} of ${count}`)), ms);
            waiter = { count, resolve: () => (clearTimeout(timer), resolve()) };
          }),
  };
}

export function busConformance(t: Test, name: string, open: (n: number) => Promise<OpenedBuses>): void {
  const withBuses = (title: string, n: number, body: (t: Test, o: OpenedBuses) => Promise<void>) =>
    t.test(`${name}: ${title}`, async (t) => {
      const opened = await open(n);
      t.teardown(opened.close);
      await body(t, opened);
    });

  withBuses('each other subscribed node gets each publication once; the publisher gets none back', 3, async (t, { buses }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const topic = chat();
    const [onA, onB, onC] = [collector(a, topic), collector(b, topic), collector(c, topic)];
    await Promise.all(buses.map((bus) => bus.ready()));
    a.publish(topic, bytes('from a'));
    b.publish(topic, bytes('from b'));
    await Promise.all([onA.until(1), onB.until(1), onC.until(2)]);
    // A marker from c: once it has arrived, anything duplicated before it would have too.
    c.publish(topic, bytes('marker'));
    await Promise.all([onA.until(2), onB.until(2)]);
    t.same(onA.got, ['from b', 'marker']);
    t.same(onB.got, ['from a', 'marker']);
    t.same(onC.got.sort(), ['from a', 'from b']);
  });

  withBuses('only interested nodes receive; a topic nobody follows crosses to nobody', 3, async (t, { buses, subscribers }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const [followed, other] = [chat(), chat()];
    const onB = collector(b, followed);
    const onCOther = collector(c, other);
    await Promise.all(buses.map((bus) => bus.ready()));
    t.equal(await subscribers(followed), 1, 'one node subscribed to the chat');
    t.equal(await subscribers(other), 1);
    a.publish(followed, bytes('x'));
    await onB.until(1);
    a.publish(other, bytes('marker'));
    await onCOther.until(1);
    t.same(onCOther.got, ['marker'], 'c got nothing of the chat it does not follow');
  });

  withBuses('per-publisher order of 1,000 publications; binary payloads intact', 2, async (t, { buses }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    const got: Uint8Array[] = [];
    let done: () => void = () => undefined;
    const all = new Promise<void>((resolve) => (done = resolve));
    b.subscribe(topic, (p) => {
      got.push(p);
      if (got.length === 1001) done();
    });
    await b.ready();
    for (let i = 0; i < 1000; i++) a.publish(topic, bytes(String(i)));
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    a.publish(topic, binary);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`got ${got.length}`)), 10_000)))]);
    clearTimeout(timer);
    t.same(got.slice(0, 1000).map(text), Array.from({ length: 1000 }, (_, i) => String(i)), 'in publish order');
    t.same([...got[1000]!], [...binary], 'every byte value survives');
  });

  withBuses('subscriptions are reference counted', 2, async (t, { buses, subscribers }) => {
    const [a, b] = buses as [Bus, Bus];
    const topic = chat();
    const first = collector(b, topic);
    const second = collector(b, topic);
    await b.ready();
    t.equal(await subscribers(topic), 1, 'two local handlers, one transport subscription');
    first.off();
    await b.ready();
    t.equal(await subscribers(topic), 1, 'still subscribed while a handler remains');
    a.publish(topic, bytes('one'));
    await second.until(1);
    t.same(first.got, [], 'a removed handler gets nothing');
    second.off();
    await b.ready();
    t.equal(await subscribers(topic), 0, 'unsubscribed from the transport with the last handler');
    // Nothing arrives after the last unsubscribe: a marker on another topic bounds the wait.
    const marker = { kind: 'user', appId: randomUUID(), userId: randomUUID() } as const;
    const onMarker = collector(b, marker);
    await b.ready();
    a.publish(topic, bytes('late'));
    a.publish(marker, bytes('marker'));
    await onMarker.until(1);
    t.same(second.got, ['one']);
  });

  withBuses('control messages reach every other node; user topics are separate from chat topics', 3, async (t, { buses }) => {
    const [a, b, c] = buses as [Bus, Bus, Bus];
    const control = { kind: 'control' } as const;
    const [onB, onC] = [collector(b, control), collector(c, control)];
    const appId = randomUUID();
    const id = randomUUID();
    const onUser = collector(b, { kind: 'user', appId, userId: id });
    const onChat = collector(c, { kind: 'chat', appId, chatId: id });
    await Promise.all(buses.map((bus) => bus.ready()));
    a.publish(control, bytes('revoke'));
    a.publish({ kind: 'user', appId, userId: id }, bytes('to user'));
    a.publish({ kind: 'chat', appId, chatId: id }, bytes('to chat'));
    await Promise.all([onB.until(1), onC.until(1), onUser.until(1), onChat.until(1)]);
    t.same([onB.got, onC.got, onUser.got, onChat.got], [['revoke'], ['revoke'], ['to user'], ['to chat']]);
  });
}
