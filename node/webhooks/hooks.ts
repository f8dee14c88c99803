import type { Logger } from '../../common/index.ts';
import { messageJson, type ChangeEventItem, type ChatEvent, type ChatWebhooks, type MessageView, type MessageWrite } from '../chat/index.ts';
import { changeLanded, type NodeStore, type OutboxEvent } from '../store/index.ts';
import { Raw, WebhookDispatcher } from './dispatcher.ts';
import { anySubscribed, EndpointCache } from './endpoints.ts';
import type { HookEndpoint, WebhookSource } from './source.ts';
import type { MakeEvent, OutboxConsumer } from './outbox-consumer.ts';
import { UnreadCoalescer } from './unread.ts';

export interface NodeWebhooksOptions {
  store: NodeStore;
  source: WebhookSource;
  /** Users of the application with a live connection (cluster-wide presence, or this node's). */
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  adopts: (owner: string) => boolean | Promise<boolean>;
  changed: (appId: string) => void;
  allowInsecure: boolean;
  unreadWindowMs: number;
  cacheTtlMs: number;
  /** Other work riding the outbox with the message writes (push notifications). */
  consumers?: OutboxConsumer[];
  log: Logger;
}

const webhookTypeOf: Partial<Record<ChatEvent['type'], string>> = {
  'message.new': 'message.new',
  'message.edited': 'message.updated',
  'message.deleted': 'message.deleted',
  'message.hidden': 'message.updated',
  'message.restored': 'message.updated',
  'reaction.added': 'reaction.added',
  'reaction.removed': 'reaction.removed',
};

/**
 * A message view with its `rev`, as JSON text: the view's text (messageJson, shared with its
 * realtime frame and acknowledgement) with the field added at its end, which is what `{ ...message, rev }` would give.
 */
function withRev(text: string, rev: number): Raw {
  return new Raw(text === '{}' ? `{"rev":${rev}}` : `${text.slice(0, -1)},"rev":${rev}}`);
}

/**
 * A node's webhooks: the events its writes make, where they are delivered from (the dispatcher),
 * and `message.unread`. Costs nothing for an application with no endpoint subscribed to a type:
 * the endpoints are read from a cache, and no event is made or written.
 */
export class NodeWebhooks implements ChatWebhooks {
  readonly endpoints: EndpointCache;
  readonly dispatcher: WebhookDispatcher;
  private readonly unread: UnreadCoalescer;

  constructor(private readonly o: NodeWebhooksOptions) {
    this.endpoints = new EndpointCache(o.source, o.cacheTtlMs);
    this.dispatcher = new WebhookDispatcher({
      outbox: o.store.outbox,
      owner: () => o.store.writers.self.id,
      source: o.source,
      endpoints: this.endpoints,
      adopts: o.adopts,
      verify: async (e) => (e.check ? changeLanded(o.store, e.appId, e.check) : true),
      changed: o.changed,
      allowInsecure: o.allowInsecure,
      ...(o.consumers ? { consumers: o.consumers } : {}),
      log: o.log,
    });
    this.unread = new UnreadCoalescer(o.unreadWindowMs, (p) => this.sendUnread(p));
  }

  private wants(appId: string, type: string): boolean | Promise<boolean> {
    const list = this.endpoints.get(appId);
    return Array.isArray(list) ? anySubscribed(list, type) : list.then((l) => anySubscribed(l, type));
  }

  private readonly makeEvent: MakeEvent = (appId, type, json, check) => this.dispatcher.make(appId, type, new Raw(json), check);

  /** The events of a batch of message writes: the endpoints' and the consumers' (push). */
  messageEvents(appId: string, writes: readonly MessageWrite[]): OutboxEvent[] | Promise<OutboxEvent[]> {
    const hooks = this.webhookMessageEvents(appId, writes);
    const consumers = this.o.consumers;
    if (!consumers || consumers.length === 0) return hooks;
    const parts = [hooks, ...consumers.map((c) => c.messageEvents(appId, writes, this.makeEvent))];
    // Without a promise on the way while every part is at hand (as it is but once per cache period).
    if (!parts.some((p) => p instanceof Promise)) return (parts as OutboxEvent[][]).flat();
    return Promise.all(parts).then((all) => all.flat());
  }

  private webhookMessageEvents(appId: string, writes: readonly MessageWrite[]): OutboxEvent[] | Promise<OutboxEvent[]> {
    const list = this.endpoints.get(appId);
    // Endpoints never read (the control store is away): every event is made, and the dispatcher
    // finds out later whom it is for, so a send neither waits for nor loses it.
    if (!Array.isArray(list)) return list.then((l) => this.makeMessageEvents(appId, writes, l), () => this.makeMessageEvents(appId, writes, undefined));
    return this.makeMessageEvents(appId, writes, list);
  }

  private makeMessageEvents(appId: string, writes: readonly MessageWrite[], list: HookEndpoint[] | undefined): OutboxEvent[] {
    if (list && !list.some((e) => e.status === 'ACTIVE')) return [];
    const out: OutboxEvent[] = [];
    for (const w of writes) {
      const { message, event } = w;
      const type = webhookTypeOf[event.type];
      if (!type || (list && !anySubscribed(list, type))) continue;
      const data =
        event.type === 'reaction.added' || event.type === 'reaction.removed'
          ? { ...event.reaction, seq: event.seq, rev: event.rev }
          : 'message' in event
            ? withRev(messageJson(event.message), event.rev)
            : undefined;
      out.push(this.dispatcher.make(appId, type, data, { chatId: message.chatId, messageId: message.id, rev: event.rev }));
    }
    return out;
  }

  written(events: OutboxEvent[], ok: boolean): void {
    if (events.length > 0) this.dispatcher.written(events, ok);
  }

  /** The events of a change about to be written with them: the endpoints' and the consumers' (file deletions). */
  async prepare(appId: string, items: ChangeEventItem[]): Promise<OutboxEvent[]> {
    const hooks = await this.dispatcher.prepare(appId, items);
    const extra = (this.o.consumers ?? []).flatMap((c) => c.changeEvents?.(appId, items, this.makeEvent) ?? []);
    return extra.length === 0 ? hooks : [...hooks, ...extra];
  }

  emit(appId: string, items: { type: string; data: unknown }[]): Promise<void> {
    return this.dispatcher.emit(appId, items);
  }

  stored(appId: string, chatId: string, messages: MessageView[], members: ReadonlyMap<string, unknown>): void {
    if (messages.length === 0) return;
    const failed = (error: unknown) => this.o.log.warn({ err: String(error), appId, chatId }, 'cannot tell who has unread messages');
    try {
      // Without a promise on the way while the endpoints and who is online are at hand (as they
      // are but once per cache period, standalone): every message passes here.
      const wanted = this.wants(appId, 'message.unread');
      if (wanted === false) return;
      const online = wanted === true ? this.o.usersOnline(appId) : undefined;
      if (online !== undefined && !(online instanceof Promise)) return this.unreadFor(appId, chatId, messages, members.keys(), online);
      // The members now: the actor's map may change before who is online is known.
      const memberIds = [...members.keys()];
      void (async () => {
        if (!(await wanted)) return;
        this.unreadFor(appId, chatId, messages, memberIds, await (online ?? this.o.usersOnline(appId)));
      })().catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  private unreadFor(appId: string, chatId: string, messages: MessageView[], memberIds: Iterable<string>, online: ReadonlySet<string>): void {
    for (const userId of memberIds) {
      if (online.has(userId)) continue;
      for (const m of messages) if (userId !== m.senderId) this.unread.add(appId, chatId, userId, m);
    }
  }

  private async sendUnread(p: { appId: string; chatId: string; userId: string; messages: number; lastSeq: number; lastMessage: MessageView; mentioned: boolean }): Promise<void> {
    try {
      const member = await this.o.store.chats.member(p.appId, p.chatId, p.userId);
      if (!member) return;
      const data = { chatId: p.chatId, userId: p.userId, unreadCount: Math.max(0, p.lastSeq - member.readSeq), messages: p.messages, mentioned: p.mentioned, lastMessage: p.lastMessage };
      await this.emit(p.appId, [{ type: 'message.unread', data }]);
    } catch (error) {
      this.o.log.warn({ err: String(error), appId: p.appId, chatId: p.chatId }, 'cannot send message.unread');
    }
  }

  invalidate(appId: string): void {
    this.endpoints.invalidate(appId);
    this.dispatcher.endpointsChanged(appId);
  }

  async close(): Promise<void> {
    await this.unread.flush();
    await this.dispatcher.close();
  }
}
