import type { Logger } from '../../common/index.ts';
import type { ChatWebhooks, EventSink } from '../chat/index.ts';
import type { NodeStore } from '../store/index.ts';
import type { Connection } from './hub.ts';

/** What announcing a presence change uses of the gateway's dependencies (the gateway passes its own). */
export interface PresenceChangeDeps {
  webhooks?: ChatWebhooks;
  store: NodeStore;
  events: EventSink;
  log: Logger;
}

/**
 * Whether a connection opening (or closing) is its user's first (or last): known at once on a node
 * alone, asked of the cluster's presence otherwise.
 */
export type Transition = boolean | (() => Promise<boolean>);

/**
 * Member lists read together while a change is announced: a user in many chats waits for about
 * chats ÷ this many round trips (on Cassandra), not one per chat, and opens no more reads at once.
 */
export const MEMBER_READS_IN_FLIGHT = 8;

/** What presenceChanged returns when there is nothing to announce: settled, shared by every such call. */
export const NO_CHANGE: Promise<void> = Promise.resolve();

/**
 * Tells every user who shares a chat with `c`'s user that it came online or went offline, when
 * `transition` says this connection was the user's first (or its last ended). Never rejects.
 * Most sockets of a user are neither: for those known at once, nothing runs and NO_CHANGE is
 * returned, so opening them allocates no promise chain for it.
 */
export function presenceChanged(deps: PresenceChangeDeps, c: Connection, type: 'presence.online' | 'presence.offline', transition: Transition): Promise<void> {
  return transition === false ? NO_CHANGE : announce(deps, c, type, transition);
}

async function announce(deps: PresenceChangeDeps, c: Connection, type: 'presence.online' | 'presence.offline', transition: true | (() => Promise<boolean>)): Promise<void> {
  try {
    if (transition !== true && !(await transition())) return;
    // Once per transition cluster-wide (Presence's guarantee), like the realtime event; a store
    // that cannot take the webhook event does not keep the realtime one from the user's contacts.
    await deps.webhooks?.emit(c.appId, [{ type: type === 'presence.online' ? 'user.online' : 'user.offline', data: { userId: c.userId } }]).catch((error: unknown) => deps.log.warn({ err: String(error), type }, 'presence webhook event not written'));
    const chatIds = await deps.store.chats.chatsOf(c.appId, c.userId);
    const others = new Set<string>();
    let next = 0;
    const readMembers = async () => {
      while (next < chatIds.length) {
        const chatId = chatIds[next++]!;
        for (const m of await deps.store.chats.members(c.appId, chatId)) if (m.userId !== c.userId) others.add(m.userId);
      }
    };
    await Promise.all(Array.from({ length: Math.min(MEMBER_READS_IN_FLIGHT, chatIds.length) }, readMembers));
    for (const userId of others) deps.events.userEvent(c.appId, userId, { type, userId: c.userId });
  } catch (error) {
    // Presence is a courtesy: an outage of Redis or the store must not touch the connection.
    deps.log.warn({ err: String(error), type }, 'presence not announced');
  }
}
