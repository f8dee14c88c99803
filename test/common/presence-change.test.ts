import { randomUUID } from 'node:crypto';
import t from 'tap';
import { createLogger } from '../../common/index.ts';
import type { EventSink, UserEvent } from '../../node/chat/index.ts';
import type { Member } from '../../node/store/index.ts';
import { MEMBER_READS_IN_FLIGHT, presenceChanged } from '../../node/realtime/presence-change.ts';
import type { Connection } from '../../node/realtime/hub.ts';
import { MemoryNodeStore } from '../helpers/memory-node-store.ts';

// A user's presence change is announced to everyone who shares a chat with it (presence-change.ts):
// the chats' member lists are read MEMBER_READS_IN_FLIGHT at a time, not one after another.
t.test("a presence change reads its chats' members several at a time, and tells each contact once", async (t) => {
  const fake = new MemoryNodeStore();
  const appId = randomUUID();
  const at = '2030-01-01T00:00:00.000Z';
  const chats = Array.from({ length: 20 }, () => fake.groupChat(appId, 3, at));
  const user = chats[0]!.ids[0]!;
  // The user (the first chat's owner) joins the 19 others too; one contact shares two of its chats.
  for (const { chat } of chats.slice(1)) await fake.store.chats.putMember({ appId, chatId: chat.id, userId: user, role: 'member', joinedAt: at, readSeq: 0 });
  await fake.store.chats.putMember({ appId, chatId: chats[1]!.chat.id, userId: chats[2]!.ids[1]!, role: 'member', joinedAt: at, readSeq: 0 });
  let inFlight = 0;
  let most = 0;
  const members = fake.store.chats.members.bind(fake.store.chats);
  fake.store.chats.members = async (a: string, chatId: string): Promise<Member[]> => {
    most = Math.max(most, ++inFlight);
    await new Promise((resolve) => setTimeout(resolve, 5));
    inFlight--;
    return members(a, chatId);
  };
  const told: { userId: string; event: UserEvent }[] = [];
  const events: EventSink = { chatEvent: () => undefined, threadEvent: () => undefined, userEvent: (_a, userId, event) => void told.push({ userId, event }), membershipMoved: () => undefined };
  const c = { appId, userId: user } as Connection;
  await presenceChanged({ store: fake.store, events, log: createLogger('silent', 'test') }, c, 'presence.online', true);
  t.equal(most, MEMBER_READS_IN_FLIGHT, `${MEMBER_READS_IN_FLIGHT} member lists read at once, no more`);
  const contacts = new Set(chats.flatMap(({ ids }) => ids).filter((id) => id !== user));
  t.same(told.map((x) => x.userId).sort(), [...contacts].sort(), 'every contact told once, the user not');
  t.ok(told.every((x) => x.event.type === 'presence.online' && 'userId' in x.event && x.event.userId === user));
});
