import type { MessageView } from '../chat/index.ts';
import type { Chat, NodeStore, PushDevice } from '../store/index.ts';

/** A member a new message is pushed to, and where. */
export interface PushTarget {
  userId: string;
  mentioned: boolean;
  devices: PushDevice[];
}

export interface TargetOptions {
  /** Users of the application with a live connection on any node: they get the message by socket, not push. */
  online: ReadonlySet<string>;
  /** In a chat of more members than this, only the members it mentions are pushed to (PUSH_CHAT_MEMBERS_MAX). */
  maxMembers: number;
  now: string;
}

/**
 * Who a new message is pushed to (README, "Push notifications"): the chat's members other than
 * its sender with no live connection, with a device, except a member who turned off the chat's
 * pushes, blocked the sender, or is banned from the application. In a chat larger than
 * `maxMembers` only the mentioned members are (a push to every member of a large group would cost
 * a read per member per message). Every check reads the store as it is when the push is made.
 */
export async function pushTargets(store: NodeStore, chat: Chat, message: MessageView, o: TargetOptions): Promise<PushTarget[]> {
  const { appId } = chat;
  const mentions = new Set(message.mentions ?? []);
  const large = (chat.memberCount ?? 0) > o.maxMembers;
  const candidates = large
    ? (await Promise.all([...mentions].map((userId) => store.chats.member(appId, chat.id, userId)))).filter((m) => m !== undefined).map((m) => m.userId)
    : (await store.chats.members(appId, chat.id)).map((m) => m.userId);
  const wanted = candidates.filter((userId) => userId !== message.senderId && !o.online.has(userId));
  const targets = await Promise.all(
    wanted.map(async (userId): Promise<PushTarget | undefined> => {
      const [devices, muted, blocked, banned] = await Promise.all([
        store.push.list(appId, userId),
        store.push.chatMuted(appId, userId, chat.id),
        store.moderation.blockOf(appId, userId, message.senderId),
        store.moderation.banOf(appId, userId, o.now),
      ]);
      if (devices.length === 0 || muted || blocked || banned) return undefined;
      return { userId, mentioned: mentions.has(userId), devices };
    }),
  );
  return targets.filter((t) => t !== undefined);
}
