import type { Logger } from '../../common/index.ts';
// retry.ts itself, not the webhooks index: that loads undici, which a process importing node/files (the tests) must not.
import { retryDelay } from '../../common/webhooks/retry.ts';
import type { ChangeEventItem, MessageWrite } from '../chat/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import { RetryTimers, type ConsumerJob, type MakeEvent, type OutboxConsumer } from '../webhooks/outbox-consumer.ts';
import type { FileMarker, FileSweeper } from './sweeper.ts';

/** The outbox event type of a deletion's files: never a webhook type, so no endpoint sees it. */
export const FILES_EVENT = 'files.deleted';

type Deleted = { kind: 'message'; chatId: string; messageId: string; uploadIds: string[] } | { kind: 'chat'; chatId: string };

/** How long a deletion waits at most between attempts while the object store fails. */
const MAX_RETRY_MS = 5 * 60_000;

/**
 * The files of a deleted message or chat, deleted through the webhook outbox (README,
 * "Attachments"): the event is written with the deletion itself (in its transaction on LMDB; ahead
 * of it with its check on Cassandra), so a deletion never waits for the object store, and once it
 * is acknowledged its files will go, whatever happens to the node (a dead node's outbox is adopted
 * by another). The files go as soon as the event is delivered, after the sweeper checks that
 * nothing needs them any more; while the object store fails they are tried again with backoff,
 * without end.
 */
export class FileDeletions implements OutboxConsumer {
  private readonly retries = new RetryTimers();

  constructor(
    private readonly sweeper: FileSweeper,
    private readonly log: Logger,
  ) {}

  takes(event: OutboxEvent): boolean {
    return event.type === FILES_EVENT;
  }

  messageEvents(appId: string, writes: readonly MessageWrite[], make: MakeEvent): OutboxEvent[] {
    let out: OutboxEvent[] | undefined;
    for (const w of writes) {
      if (w.event.type !== 'message.deleted' || !w.message.attachments?.length) continue;
      // The chat's files hold the upload (a/{app}/{chat}/{upload}/), also for a reply in one of its threads.
      const data: Deleted = { kind: 'message', chatId: w.event.chatId, messageId: w.message.id, uploadIds: w.message.attachments.map((a) => a.id) };
      (out ??= []).push(make(appId, FILES_EVENT, JSON.stringify(data), { chatId: w.message.chatId, messageId: w.message.id, rev: w.event.rev }));
    }
    return out ?? [];
  }

  changeEvents(appId: string, items: readonly ChangeEventItem[], make: MakeEvent): OutboxEvent[] {
    const out: OutboxEvent[] = [];
    for (const item of items) {
      if (item.type !== 'chat.deleted' || item.check.kind !== 'chat') continue;
      const data: Deleted = { kind: 'chat', chatId: item.check.chatId };
      out.push(make(appId, FILES_EVENT, JSON.stringify(data), item.check));
    }
    return out;
  }

  deliver(job: ConsumerJob, failures = 0): void {
    if (this.retries.closed || !job.live()) return;
    const { appId } = job.event;
    const data = (JSON.parse(job.event.body) as { data: Deleted }).data;
    const markers: FileMarker[] =
      data.kind === 'chat' ? [{ kind: 'chat', appId, chatId: data.chatId }] : data.uploadIds.map((uploadId) => ({ kind: 'message', appId, chatId: data.chatId, messageId: data.messageId, uploadId }));
    void (async () => {
      for (const m of markers) await this.sweeper.collect(m);
    })().then(
      () => job.finish(),
      (error: unknown) => {
        const delay = Math.min(MAX_RETRY_MS, retryDelay(failures + 1));
        this.log.warn({ err: String(error), eventId: job.event.id, retryInMs: delay }, "cannot delete a deletion's files yet; tried again");
        this.retries.later(() => this.deliver(job, failures + 1), delay);
      },
    );
  }

  /** Stops: what waits for a retry stays in the outbox, for the next run or the node that adopts it. */
  close(): void {
    this.retries.close();
  }
}
