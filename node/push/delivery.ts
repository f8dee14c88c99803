import type { Logger } from '../../common/index.ts';
import type { PushSettings } from '../../common/push/index.ts';
import { eventTime, retryDelay } from '../../common/webhooks/index.ts';
import { messageJson, type MessageView, type MessageWrite } from '../chat/index.ts';
import type { NodeStore, OutboxEvent, PushDevice } from '../store/index.ts';
import { RetryTimers, type ConsumerJob, type MakeEvent, type OutboxConsumer } from '../webhooks/outbox-consumer.ts';
import { PushLanes, type LanePush } from './push-lanes.ts';
import { PUSH_TTL_SECONDS, type PushContent } from './payload.ts';
import { pushTargets, type PushTarget } from './recipients.ts';
import type { PushOutcome, PushProvider, PushSenders } from './senders.ts';
import type { PushSettingsCache } from './settings-cache.ts';

/** The outbox event type of a message to push: never a webhook type, so no endpoint sees it. */
export const PUSH_EVENT = 'push.message';

/** What the node is told of each push attempt: metrics and the delivery log. */
export interface PushObserver {
  /** A message's pushes not worked out (`message`: a newer one of the same sender and chat stands for it), or a push to a device not made (`device`: a newer one of the chat does). */
  collapsed(stage: 'message' | 'device'): void;
  attempted(appId: string, provider: PushProvider, job: OutboxEvent, target: { userId: string; deviceId: string; messageId: string }, outcome: PushOutcome, attempt: number, nextRetryAt: number | undefined): void;
}

export interface PushDeliveryOptions {
  store: NodeStore;
  settings: PushSettingsCache;
  senders: PushSenders;
  /** Users of the application with a live connection (cluster-wide presence, or this node's). */
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  maxMembers: number;
  /**
   * A device's pushes of one chat start at least this far apart, and a sender's messages of one
   * chat are worked out at least this far apart (PUSH_CHAT_INTERVAL_MS; PushLanes).
   */
  intervalMs: number;
  observer: PushObserver;
  log: Logger;
  now?: () => number;
}

/** A push to one device for one message, as it goes through its lane and its attempts. */
interface DevicePush extends LanePush {
  job: ConsumerJob;
  settings: PushSettings;
  userId: string;
  device: PushDevice;
  content: PushContent;
  attempt: number;
  /** Called once per device of the job: the job is finished when every device is. */
  ended: () => void;
}

/** A message to push, before its recipients are known: the mentions of the older ones it stands for are added to its own. */
interface MessagePush extends LanePush {
  job: ConsumerJob;
  message: MessageView;
  mentions: Set<string>;
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
 * handover pushes again only what was not marked (marks are written every second). A busy chat
 * is collapsed (PushLanes), as the push service would collapse it by the chat's key: a sender's
 * messages of a chat are worked out at most once a second, the newest standing for those that
 * waited (their mentions added to its own), and a device's pushes of a chat start at most once
 * a second, one at a time, the newest waiting replacing older ones. The first message of a quiet
 * chat is pushed at once, and the newest of a busy one within about a second. A device that
 * fails for a while (429, 5xx, no answer) is tried again with backoff until the push's TTL has
 * passed or a newer push of its chat replaces it, without holding up any other device, chat or
 * send.
 */
export class PushDelivery implements OutboxConsumer {
  private readonly retries = new RetryTimers();
  private readonly messages: PushLanes<MessagePush>;
  private readonly devices: PushLanes<DevicePush>;
  private readonly now: () => number;

  constructor(private readonly o: PushDeliveryOptions) {
    this.now = o.now ?? Date.now;
    this.messages = new PushLanes<MessagePush>({ start: (m) => this.startMessage(m), superseded: (m, by) => this.messageSuperseded(m, by) }, o.intervalMs);
    this.devices = new PushLanes<DevicePush>({ start: (p) => this.attempt(p), superseded: (p, by) => this.superseded(p, by) }, o.intervalMs);
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
    let message: MessageView;
    try {
      message = (JSON.parse(job.event.body) as { data: MessageView }).data;
    } catch (error) {
      // Not expected (the node wrote it): it can never be pushed, so it does not wait in the outbox.
      this.o.log.warn({ err: String(error), eventId: job.event.id }, 'a push event that cannot be read is dropped');
      return job.finish();
    }
    const { appId } = job.event;
    this.messages.offer({ lane: `${appId} ${message.chatId} ${message.senderId}`, sentAtMs: eventTime(job.event.id), eventId: job.event.id, job, message, mentions: new Set(message.mentions ?? []) });
  }

  /** Works out a message's pushes; on a store or settings read that fails, again in 5 s (unless a newer message of its lane replaces it). */
  private startMessage(m: MessagePush): void {
    if (this.retries.closed) return;
    if (!m.job.live()) return this.messages.over(m);
    this.run(m).catch((error: unknown) => {
      this.o.log.warn({ err: String(error), eventId: m.job.event.id }, 'cannot push a message yet; tried again in 5 s');
      this.retries.later(() => {
        if (!this.messages.replaced(m)) this.startMessage(m);
      }, UNREADABLE_RETRY_MS);
    });
  }

  /** A message whose pushes a newer one of the same sender and chat stands for: its mentions go to that one, and it is finished. */
  private messageSuperseded(m: MessagePush, by: MessagePush): void {
    for (const userId of m.mentions) by.mentions.add(userId);
    this.o.observer.collapsed('message');
    if (m.job.live()) m.job.finish();
  }

  private async run(m: MessagePush): Promise<void> {
    const { job } = m;
    const { appId } = job.event;
    const message: MessageView = { ...m.message, mentions: [...m.mentions] };
    const settings = await this.o.settings.get(appId);
    const finished = () => {
      job.finish();
      this.messages.over(m);
    };
    if (!hasProvider(settings) || this.now() - m.sentAtMs > PUSH_TTL_SECONDS * 1000) return finished();
    const chat = await this.o.store.chats.get(appId, message.chatId);
    if (!chat) return finished();
    const online = await this.o.usersOnline(appId);
    const targets = await pushTargets(this.o.store, chat, message, { online, maxMembers: this.o.maxMembers, now: new Date(this.now()).toISOString() });
    const sender = targets.length > 0 ? await this.o.store.users.get(appId, message.senderId) : undefined;
    const pending: { target: PushTarget; device: PushDevice }[] = [];
    for (const target of targets) for (const device of target.devices) if (!job.done.includes(device.deviceId)) pending.push({ target, device });
    if (pending.length === 0) return finished();
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
        sentAtMs: m.sentAtMs,
      };
      this.devices.offer({ lane: `${appId} ${device.deviceId} ${message.chatId}`, sentAtMs: m.sentAtMs, eventId: job.event.id, job, settings: settings!, userId: target.userId, device, content, attempt: 1, ended });
    }
    // Each device's push is in its lane (made, or waiting there to be replaced by a newer one): the next message of this lane may be worked out.
    this.messages.over(m);
  }

  /** A push the lanes will not make: the newer one they make stands for it (a mention keeps the newer one's urgency high). */
  private superseded(p: DevicePush, by: DevicePush): void {
    if (p.content.mentioned) by.content.mentioned = true;
    this.o.observer.collapsed('device');
    if (!p.job.live()) return;
    p.job.mark(p.device.deviceId);
    p.ended();
  }

  /** One attempt at one device; a transient failure comes back after its backoff, until the TTL has passed or a newer push of its lane replaces it. */
  private attempt(p: DevicePush): void {
    if (this.retries.closed) return;
    if (!p.job.live()) return this.devices.over(p);
    const { job, device, content } = p;
    void this.o.senders.send(p.settings, device, content).then(async (outcome) => {
      const provider = device.address.kind;
      const retryAt = outcome.result === 'retry' ? this.now() + retryDelay(p.attempt) : undefined;
      const giveUp = retryAt !== undefined && retryAt - content.sentAtMs > PUSH_TTL_SECONDS * 1000;
      this.o.observer.attempted(job.event.appId, provider, job.event, { userId: p.userId, deviceId: device.deviceId, messageId: content.messageId }, outcome, p.attempt, giveUp ? undefined : retryAt);
      if (outcome.result === 'gone') {
        await this.o.store.push.remove(job.event.appId, p.userId, device.deviceId).catch((error: unknown) => this.o.log.warn({ err: String(error), deviceId: device.deviceId }, 'cannot remove a push device the service says is gone'));
      }
      if (retryAt !== undefined && !giveUp) {
        if (this.devices.replaced(p)) return;
        // The settings may change while it waits (a provider removed, new credentials): read again.
        return this.retries.later(() => {
          if (this.devices.replaced(p)) return;
          p.attempt++;
          void Promise.resolve(this.o.settings.get(job.event.appId)).then(
            (now) => (now ? ((p.settings = now), this.attempt(p)) : this.made(p)),
            () => this.attempt(p),
          );
        }, retryAt - this.now());
      }
      this.made(p);
    }).catch((error: unknown) => {
      // Not expected (the senders answer every failure as an outcome): the device waits for the next run or adoption.
      this.o.log.warn({ err: String(error), eventId: job.event.id, deviceId: device.deviceId }, 'a push attempt failed unexpectedly');
      this.devices.over(p);
    });
  }

  /** The push to a device is over (taken, refused for good, gone, given up): marked done, and its lane's next is made. */
  private made(p: DevicePush): void {
    if (p.job.live()) {
      p.job.mark(p.device.deviceId);
      p.ended();
    }
    this.devices.over(p);
  }

  /** Stops: what waits for a retry stays unfinished in the outbox, for the next run or the node that adopts it. */
  close(): void {
    this.retries.close();
    this.messages.clear();
    this.devices.clear();
  }
}
