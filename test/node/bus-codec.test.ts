import t from 'tap';
import type { Logger } from '../../common/log/index.ts';
import {
  BUS_PROTOCOL_VERSION,
  channelOf,
  decodeControl,
  decodeEnvelope,
  encodeControl,
  encodeEnvelope,
  MemoryBroker,
  MemoryBus,
  type BusLogger,
  type ControlMessage,
} from '../../node/bus/index.ts';
import { recordingLog } from './bus-helpers.ts';

// Compile-time: the service's pino logger is a BusLogger.
export const loggerFits = (log: Logger): BusLogger => log;

t.test('envelope: both payload types round-trip with their origin', async (t) => {
  const bytes = Uint8Array.from([0, 1, 254, 255]);
  const number = Date.now() * 1000 + 12345;
  const binary = decodeEnvelope(encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number, type: 'binary', origin: 'node-ü', payload: bytes }));
  t.equal(binary?.type, 'binary');
  t.equal(binary?.origin, 'node-ü');
  t.equal(binary?.number, number, 'the publication number, past 2^32, round-trips');
  t.same([...(binary?.payload as Uint8Array)], [...bytes]);
  const text = decodeEnvelope(encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number: 7, type: 'text', origin: 'n', payload: '{"a":"✓"}' }));
  t.same(text, { v: BUS_PROTOCOL_VERSION, number: 7, type: 'text', origin: 'n', payload: '{"a":"✓"}' });
  const older = decodeEnvelope(encodeEnvelope({ v: 1, type: 'text', origin: 'n', payload: 'x' }));
  t.same(older, { v: 1, type: 'text', origin: 'n', payload: 'x' }, 'version 1 (a node of the previous release) is still read, without a number');
  const whole = Buffer.from('xxabcxx');
  const view = new Uint8Array(whole.buffer, whole.byteOffset + 2, 3);
  t.same(decodeEnvelope(encodeEnvelope({ v: 1, type: 'binary', origin: 'n', payload: view }))?.payload, Buffer.from('abc'), 'a view is encoded as its own bytes only');
});

t.test('envelope: other versions, unknown types and truncated frames are refused', async (t) => {
  const good = encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number: 1, type: 'text', origin: 'node', payload: 'x' });
  t.equal(decodeEnvelope(Buffer.from([BUS_PROTOCOL_VERSION + 1, ...good.subarray(1)])), undefined, 'another version');
  t.equal(decodeEnvelope(Buffer.from([good[0]!, 9, ...good.subarray(2)])), undefined, 'an unknown type');
  t.equal(decodeEnvelope(good.subarray(0, 4)), undefined, 'origin cut short');
  t.equal(decodeEnvelope(good.subarray(0, 3 + 4 + 5)), undefined, 'number cut short');
  t.equal(decodeEnvelope(Buffer.alloc(0)), undefined, 'empty');
  t.throws(() => encodeEnvelope({ v: 1, type: 'text', origin: 'x'.repeat(256), payload: '' }), RangeError);
});

t.test('a bus drops a frame not newer than one it has from the same node on the channel (a replaced connection\'s backlog)', async (t) => {
  const broker = new MemoryBroker();
  const bus = new MemoryBus(broker, { nodeId: 'b' });
  const got: unknown[] = [];
  const topic = { kind: 'chat' as const, appId: 'a', chatId: 'c' };
  bus.subscribe(topic, (p, origin) => void got.push(`${origin}:${String(p)}`));
  const frame = (origin: string, number: number, payload: string) => encodeEnvelope({ v: BUS_PROTOCOL_VERSION, number, type: 'text', origin, payload });
  const channel = channelOf('', topic);
  for (const [origin, number, payload] of [['x', 10, 'x10'], ['x', 12, 'x12'], ['y', 5, 'y5'], ['x', 11, 'x11 late'], ['x', 12, 'x12 again'], ['x', 13, 'x13'], ['y', 6, 'y6']] as const) {
    broker.publish(channel, frame(origin, number, payload));
  }
  broker.publish(channel, encodeEnvelope({ v: 1, type: 'text', origin: 'z', payload: 'z unnumbered' }));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(got, ['x:x10', 'x:x12', 'y:y5', 'x:x13', 'y:y6', 'z:z unnumbered'], 'each node in order, none twice; nodes apart; version 1 frames pass unchecked');
  t.equal(bus.stats().staleDropped, 2);
  await bus.close();
});

t.test('a bus drops and counts frames it cannot read, and logs them', async (t) => {
  const broker = new MemoryBroker();
  const log = recordingLog();
  const bus = new MemoryBus(broker, { nodeId: 'b', log });
  const got: unknown[] = [];
  bus.subscribe({ kind: 'control' }, (p) => void got.push(p));
  broker.publish(channelOf('', { kind: 'control' }), Buffer.from([BUS_PROTOCOL_VERSION + 1, 2, 1, 0x61, 0x62]));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(got, []);
  t.equal(bus.stats().malformed, 1);
  t.equal(log.lines.length, 1);
  await bus.close();
});

t.test('control messages: round-trip; unknown, other-version and malformed ones are ignored', async (t) => {
  const messages: ControlMessage[] = [
    { type: 'apiKey.revoked', appId: 'a', keyId: 'k' },
    { type: 'node.leaving', nodeId: 'n' },
    { type: 'attachmentSettings.changed', appId: 'a' },
    { type: 'upload.released', appId: 'a', uploadId: 'u' },
  ];
  for (const m of messages) {
    t.same(decodeControl(encodeControl(m)), m);
    t.same(decodeControl(Buffer.from(encodeControl(m))), m, 'also from bytes');
  }
  t.equal(decodeControl(JSON.stringify({ v: 1, type: 'cluster.reboot' })), undefined, 'a type from a newer node');
  t.equal(decodeControl(JSON.stringify({ v: 2, type: 'node.leaving', nodeId: 'n' })), undefined, 'another version');
  t.equal(decodeControl(JSON.stringify({ v: 1, type: 'apiKey.revoked', appId: 'a' })), undefined, 'a missing field');
  t.equal(decodeControl('not json'), undefined);
  t.equal(decodeControl('null'), undefined);
});

t.test('channel names: one per chat, per user, one for control; prefixed', async (t) => {
  t.equal(channelOf('p:', { kind: 'chat', appId: 'a', chatId: 'c' }), 'p:c:a:c');
  t.equal(channelOf('p:', { kind: 'user', appId: 'a', userId: 'c' }), 'p:u:a:c');
  t.equal(channelOf('p:', { kind: 'control' }), 'p:control');
});
