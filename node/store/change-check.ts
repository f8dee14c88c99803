import type { ChangeCheck, NodeStore } from './types.ts';

/**
 * Whether the change an event written ahead of it reports (OutboxEvent.check) is in the store: what
 * a recovery asks before sending an event whose change was never confirmed. Exact for messages
 * (a message stays stored at its revision or a later one); for a chat, member or user, the state
 * the change left, so a later change undoing it makes the check fail. That is why those events are
 * confirmed once their change applied (EventOptions): the check decides only for a change a crash
 * cut short, never for an acknowledged one.
 */
export async function changeLanded(store: NodeStore, appId: string, check: ChangeCheck): Promise<boolean> {
  switch (check.kind) {
    case undefined: {
      const m = await store.messages.get(appId, check.chatId, check.messageId);
      return m !== undefined && (m.rev ?? 0) >= check.rev;
    }
    case 'chat': {
      const chat = await store.chats.get(appId, check.chatId);
      if (!check.present) return chat === undefined;
      return chat !== undefined && (check.updatedAt === undefined || chat.updatedAt >= check.updatedAt);
    }
    case 'member':
      return (await store.chats.member(appId, check.chatId, check.userId) !== undefined) === check.present;
    case 'user': {
      const user = await store.users.get(appId, check.userId);
      if (!check.present) return user === undefined;
      if (user === undefined) return false;
      return check.username === undefined || (await store.users.getByUsername(appId, check.username))?.id === check.userId;
    }
  }
}
