import t from 'tap';
import type { Logger } from '../../common/index.ts';
import { MemoryBroker, MemoryBus } from '../../node/bus/index.ts';
import type { ChatEvent } from '../../node/chat/index.ts';
import { ClusterEvents } from '../../node/cluster/cluster-events.ts';
import { decodeChatWire, encodeFrames } from '../../node/cluster/wire.ts';
import type { RealtimeHub } from '../../node/realtime/index.ts';

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => quiet } as unknown as Logger;
const verify = { isMember: async () => true, userExists: async () => true };
/** A node's event sink over a shared broker, with a hub that records the frames its sockets get. */
const node = (broker: MemoryBroker, id: string) => {
  const frames: string[] = [];
  const hub = { chatFrame: (_a: string, _c: string, json: string) => void frames.push(json), chatEvent: () => undefined, userEvent: () => undefined, membershipMoved: () => undefined } as unknown as RealtimeHub;
  return { events: new ClusterEvents(new MemoryBus(broker, { nodeId: id }), hub, quiet, () => undefined, verify), frames };
};
const message = (chatId: string, seq: number): ChatEvent => ({ type: 'message.new', chatId, seq, rev: seq, message: { chatId, seq, messageId: `m${seq}`, content: `c${seq}` } }) as unknown as ChatEvent;
const seqs = (frames: string[]) => frames.map((f) => (JSON.parse(f) as { seq?: number; type: string }).seq ?? (JSON.parse(f) as { type: string }).type);
const turn = () => new Promise((resolve) => setTimeout(resolve, 10));

t.test('frames carry their highest revision across the bus', async (t) => {
  t.same(decodeChatWire(encodeFrames(['{"a":1}', '{}'], 2 ** 33 + 5)), { t: 'f', frames: ['{"a":1}', '{}'], rev: 2 ** 33 + 5 });
  t.same(decodeChatWire(encodeFrames(['{}'])), { t: 'f', frames: ['{}'] }, 'without one, as a node of the previous release sends them');
  t.equal(decodeChatWire(encodeFrames(['{}'], 7).subarray(0, 6)), undefined, 'a truncated revision is dropped');
});

t.test("a node's sockets never get a chat's message events out of order or twice, whichever node they come from", async (t) => {
  const broker = new MemoryBroker();
  const [a, b] = [node(broker, 'a'), node(broker, 'b')];
  const chatId = 'chat';
  b.events.chat('app', chatId, true);
  await b.events.ready();
  for (const seq of [1, 2, 3]) a.events.chatEvent('app', message(chatId, seq));
  await turn();
  // Node b takes the chat (a was cut off), numbers past what a had taken, and its sockets get its
  // events at once; a's backlog (4-6, written before it lost the chat) arrives after, then a repeat.
  for (const seq of [70, 71]) b.events.chatEvent('app', message(chatId, seq));
  for (const seq of [4, 5, 6]) a.events.chatEvent('app', message(chatId, seq));
  await turn();
  b.events.chatEvent('app', { type: 'typing.started', chatId, userId: 'u' } as ChatEvent);
  a.events.chatEvent('app', message(chatId, 71));
  await turn();
  a.events.chatEvent('app', message(chatId, 72));
  await turn();
  t.same(seqs(b.frames), [1, 2, 3, 70, 71, 'typing.started', 72], 'older and repeated events dropped (a gap the client pages), typing passes, newer ones go on');
  t.equal(b.events.staleDropped, 2, 'two messages of stale events dropped');
});
