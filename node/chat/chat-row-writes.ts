import { ApiError } from '../../common/index.ts';
import type { Chat, MemberRole, NodeStore, StoredMessage, StoredPin } from '../store/index.ts';
import { changeWithEvents, type ChatWebhooks } from './change-events.ts';
import { FENCED, notFound } from './chat-membership.ts';
import { pinning, unpinning } from './chat-pins.ts';
import { storedData } from './custom-data.ts';
import type { ChatEvent, EventSink } from './events.ts';
import type { ChatChange } from './send-input.ts';
import { chatView } from './views.ts';

/** What the chat row's writes of one chat use of its actor. */
export interface ChatRowHost {
  readonly appId: string;
  readonly chatId: string;
  readonly deps: { store: NodeStore; events: EventSink; now: () => Date; webhooks?: ChatWebhooks };
  chat(): Chat;
  /** Replaces the actor's chat: every later write of the row (activity included) carries it. */
  setChat(chat: Chat): void;
  role(userId: string): MemberRole | undefined;
  message(id: string): Promise<StoredMessage | undefined>;
  /** Resolves once the chat row's activity write in flight, if any, has landed. */
  activityInFlight(): Promise<void>;
}

/**
 * Changes of a chat's own row: its name and data (README, "Custom data"), and its pins ("Pins").
 * The chat's actor runs each in its serial queue; each is written fenced (refused unless this node
 * holds the chat), after any activity write in flight (which carries the row as it was), and
 * announced only once stored.
 */
export class ChatRowWrites {
  constructor(private readonly host: ChatRowHost) {}

  /** A group's new name, a chat's new data, or both: a group's owners and admins, either member of a direct chat (data only). */
  async rename(byUserId: string, change: ChatChange): Promise<Chat | ApiError> {
    const { appId, chatId, deps } = this.host;
    const mine = this.host.role(byUserId);
    if (!mine) return notFound();
    const chat = this.host.chat();
    if (chat.kind === 'direct' && change.name !== undefined) return new ApiError('NOT_ALLOWED', 'direct chats have no name');
    if (chat.kind === 'group' && mine === 'member') return new ApiError('NOT_ALLOWED', 'only owners and admins change a group');
    const next: Chat = { ...chat, updatedAt: deps.now().toISOString() };
    if (change.name !== undefined) next.name = change.name;
    if (change.data !== undefined) {
      const data = storedData(change.data);
      if (data === undefined) delete next.data;
      else next.data = data;
    }
    this.host.setChat(next);
    await this.host.activityInFlight();
    const event = { type: 'chat.updated', data: chatView(next), check: { kind: 'chat' as const, chatId, present: true, updatedAt: next.updatedAt } };
    await changeWithEvents(deps.webhooks, appId, [event], (events) => deps.store.chats.update(next, { ...FENCED, events }), (r) => r === 'updated');
    deps.events.chatEvent(appId, { type: 'chat.updated', chatId, chat: chatView(next) });
    return next;
  }

  /** Pins or unpins a message (chat-pins.ts): the pin (made, or already there), or `null` for an unpin. */
  async pin(byUserId: string, messageId: string, add: boolean): Promise<StoredPin | null | ApiError> {
    const { chatId } = this.host;
    const role = this.host.role(byUserId);
    if (!role) return notFound();
    const chat = this.host.chat();
    const change = add ? pinning(chat, role, byUserId, await this.host.message(messageId), this.host.deps.now().toISOString()) : unpinning(chat, role, messageId);
    if (change instanceof ApiError) return change;
    if (change?.chat) await this.write(change.chat, add ? { type: 'message.pinned', chatId, pin: change.pin } : { type: 'message.unpinned', chatId, messageId, unpinnedBy: byUserId });
    return add && change ? change.pin : null;
  }

  /** A deleted message is unpinned with it (no `unpinnedBy`: nobody unpinned it). */
  async messageDeleted(messageId: string): Promise<void> {
    const change = unpinning(this.host.chat(), undefined, messageId);
    if (change && !(change instanceof ApiError) && change.chat) await this.write(change.chat, { type: 'message.unpinned', chatId: this.host.chatId, messageId });
  }

  private async write(next: Chat, event: ChatEvent): Promise<void> {
    this.host.setChat(next);
    await this.host.activityInFlight();
    if ((await this.host.deps.store.chats.update(next, FENCED)) === 'not-found') return;
    this.host.deps.events.chatEvent(this.host.appId, event);
  }
}
