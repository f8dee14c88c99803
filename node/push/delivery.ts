import type { Logger } from '../../common/index.ts';
import type { PushSettings } from '../../common/push/index.ts';
import { eventTime, retryDelay } from '../../common/webhooks/index.ts';
import { messageJson, type MessageView, type MessageWrite } from '../chat/index.ts';
import type { NodeStore, OutboxEvent, PushDevice } from '../store/index.ts';
import { RetryTimers, type ConsumerJob, type MakeEvent, type OutboxConsumer } from '../webhooks/outbox-consumer.ts';
import { PUSH_TTL_SECONDS, type PushContent } from './payload.ts';
import { pushTargets, type PushTarget } from './recipients.ts';
import type { PushOutcome, PushProvider, PushSenders } from './senders.ts';
import type { PushSettingsCache } from './settings-cache.ts';

/** The outbox event type of a message to push: never a webhook type, so no endpoint sees it. */
export const PUSH_EVENT = 'push.message';

/** What the node is told of each push attempt: metrics and the delivery log. */
export interface PushObserver {
  attempted(appId: string, provider: PushProvider, job: OutboxEvent, target: { userId: string; deviceId: string; messageId: string }, outcome: PushOutcome, attempt: number, nextRetryAt: number | undefined): void;
}

export interface PushDeliveryOptions {
  store: NodeStore;
  settings: PushSettingsCache;
  senders: PushSenders;
  /** Users of the application with a live connection (cluster-wide presence, or this node's). */
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  maxMembers: number;
  observer: PushObserver;
  log: Logger;
  now?: () => number;
}

const hasProvider = (s: PushSettings | undefined) => s !== undefined && (s.webPush !== undefined || s.apns !== undefined || s.fcm !== undefined);
/** Whether a message write is one to push: a new message (or thread reply) that is shown. */
const pushable = (w: MessageWrite) => w.event.type === 'message.new' && w.event.message.hidden !== true && w.event.message.type !== 'system';
/** How long a push waits when its application's settings or members cannot be read. */
const UNREADABLE_RETRY_MS = 5_000;

/**
 * Push notifications of new messages (README, "Push notifications"), riding the webhook outbox: a
 * push event is written with the message it is for (so once the send is acknowledged its push
 * will be attempted, whatever happens to this node), and the dispatcher hands it here, from this
 * node's writes and from the outboxes it adopts. Who gets it is decided when it is delivered
 * (pushTargets); each device is pushed to once, and marked done in the outbox, so a crash or a
 * handover pushes again only what was not marked (marks are written every second). A device
 * that fails for a while (429, 5xx, no answer) is tried again with backoff until the push's TTL
 * has passed, without holding up any other device or any send.
 */
export class PushDelivery implements OutboxConsumer {
  private readonly retries = new RetryTimers();
  private readonly now: () => number;

  constructor(private readonly o: PushDeliveryOptions) {
    this.now = o.now ?? Date.now;
  }

  takes(event: OutboxEvent): boolean {
    return event.type === PUSH_EVENT;
  }

  messageEvents(appId: string, writes: readonly MessageWrite[], make: MakeEvent): OutboxEvent[] | Promise<OutboxEvent[]> {
    if (!writes.some(pushable)) return [];
    const build = (settings: PushSettings | undefined, known: boolean): OutboxEvent[] => {
      // Settings never read (the control store is away): the event is made, and delivery finds out.
      if (known && !hasProvider(settings)) return [];
      const out: OutboxEvent[] = [];
      for (const w of writes) {
        if (!pushable(w) || w.event.type !== 'message.new') continue;
        out.push(make(appId, PUSH_EVENT, messageJson(w.event.message), { chatId: w.message.chatId, messageId: w.message.id, rev: w.event.rev }));
      }
      return out;
    };
    let settings: ReturnType<PushSettingsCache['get']>;
    try {
      settings = this.o.settings.get(appId);
    } catch {
      return build(undefined, false);
    }
    if (!(settings instanceof Promise)) return build(settings, true);
    return settings.then(
      (s) => build(s, true),
      () => build(undefined, false),
    );
  }

  deliver(job: ConsumerJob): void {
    if (this.retries.closed) return;
    this.run(job).catch((error: unknown) => {
      this.o.log.warn({ err: String(error), eventId: job.event.id }, 'cannot push a message yet; tried again in 5 s');
      this.retries.later(() => this.deliver(job), UNREADABLE_RETRY_MS);
    });
  }

  private async run(job: ConsumerJob): Promise<void> {
    const { appId } = job.event;
    const message = (JSON.parse(job.event.body) as { data: MessageView }).data;
    const sentAtMs = eventTime(job.event.id);
    const settings = await this.o.settings.get(appId);
    if (!hasProvider(settings) || this.now() - sentAtMs > PUSH_TTL_SECONDS * 1000) return job.finish();
    const chat = await this.o.store.chats.get(appId, message.chatId);
    if (!chat) return job.finish();
    const online = await this.o.usersOnline(appId);
    const targets = await pushTargets(this.o.store, chat, message, { online, maxMembers: this.o.maxMembers, now: new Date(this.now()).toISOString() });
    const sender = targets.length > 0 ? await this.o.store.users.get(appId, message.senderId) : undefined;
    const pending: { target: PushTarget; device: PushDevice }[] = [];
    for (const target of targets) for (const device of target.devices) if (!job.done.includes(device.deviceId)) pending.push({ target, device });
    if (pending.length === 0) return job.finish();
    let left = pending.length;
    const ended = () => {
      if (--left === 0) job.finish();
    };
    for (const { target, device } of pending) {
      const content: PushContent = {
        chatId: message.chatId,
        messageId: message.messageId,
        seq: message.seq,
        senderId: message.senderId,
        senderName: sender?.displayName || message.senderId,
        ...(chat.kind === 'group' && chat.name ? { chatName: chat.name } : {}),
        text: message.content,
        ...(message.parentId ? { parentId: message.parentId } : {}),
        mentioned: target.mentioned,
        sentAtMs,
      };
      this.attempt(job, settings!, target.userId, device, content, 1, ended);
    }
  }

  /** One attempt at one device; a transient failure comes back after its backoff, until the TTL has passed. */
  private attempt(job: ConsumerJob, settings: PushSettings, userId: string, device: PushDevice, content: PushContent, attempt: number, ended: () => void): void {
    if (this.retries.closed || !job.live()) return;
    void this.o.senders.send(settings, device, content).then(async (outcome) => {
      const provider = device.address.kind;
      const retryAt = outcome.result === 'retry' ? this.now() + retryDelay(attempt) : undefined;
      const giveUp = retryAt !== undefined && retryAt - content.sentAtMs > PUSH_TTL_SECONDS * 1000;
      this.o.observer.attempted(job.event.appId, provider, job.event, { userId, deviceId: device.deviceId, messageId: content.messageId }, outcome, attempt, giveUp ? undefined : retryAt);
      if (outcome.result === 'gone') {
        await this.o.store.push.remove(job.event.appId, userId, device.deviceId).catch((error: unknown) => this.o.log.warn({ err: String(error), deviceId: device.deviceId }, 'cannot remove a push device the service says is gone'));
      }
      if (retryAt !== undefined && !giveUp) {
        // The settings may change while it waits (a provider removed, new credentials): read again.
        return this.retries.later(() => {
          void Promise.resolve(this.o.settings.get(job.event.appId)).then(
            (now) => (now ? this.attempt(job, now, userId, device, content, attempt + 1, ended) : (job.mark(device.deviceId), ended())),
            () => this.attempt(job, settings, userId, device, content, attempt + 1, ended),
          );
        }, retryAt - this.now());
      }
      if (!job.live()) return;
      job.mark(device.deviceId);
      ended();
    }).catch((error: unknown) => {
      // Not expected (the senders answer every failure as an outcome): the device waits for the next run or adoption.
      this.o.log.warn({ err: String(error), eventId: job.event.id, deviceId: device.deviceId }, 'a push attempt failed unexpectedly');
    });
  }

  /** Stops: what waits for a retry stays unfinished in the outbox, for the next run or the node that adopts it. */
  close(): void {
    this.retries.close();
  }
}
