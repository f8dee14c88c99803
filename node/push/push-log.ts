import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../../common/index.ts';
import type { PushDeliveryRecord } from '../../common/push/index.ts';
import { eventTime } from '../../common/webhooks/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import type { PushObserver } from './delivery.ts';
import type { PushOutcome, PushProvider } from './senders.ts';

/** Where the delivery log is written (the control store). */
export type PushLogSink = (records: PushDeliveryRecord[]) => Promise<void>;

/** Successful attempts logged per application and provider per second, at most (every other outcome is). */
const LOGGED_SUCCESSES_PER_SECOND = 10;
/** Records waiting for the next write, at most: the oldest go first when the control store is away. */
const MAX_BUFFER = 10_000;

/**
 * What the node keeps of its push attempts: per-provider metrics (`chat_push_attempts_total` by
 * provider and result, `chat_push_delivery_seconds` from the send to the push service's yes,
 * `chat_push_collapsed_total` of pushes a newer one of their chat replaced while they waited), a
 * log line for each refusal, and the delivery log the management API and the dashboard show,
 * written every second (every failure; successes up to 10 a second per application and provider;
 * ids and the outcome, never the message).
 */
export class PushLog implements PushObserver {
  private readonly attempts: Counter<'provider' | 'result'>;
  private readonly latency: Histogram<'provider'>;
  private readonly collapses: Counter<'stage'>;
  private buffer: PushDeliveryRecord[] = [];
  private readonly logged = new Map<string, { second: number; n: number }>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    registry: Registry,
    private readonly log: Logger,
    private readonly sink?: PushLogSink,
  ) {
    this.attempts = new Counter({ name: 'chat_push_attempts_total', help: 'Push attempts by provider and result (sent, gone, retry, failed, unconfigured)', labelNames: ['provider', 'result'], registers: [registry] });
    this.latency = new Histogram({ name: 'chat_push_delivery_seconds', help: 'From a message being sent to its push being taken by the push service', labelNames: ['provider'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60], registers: [registry] });
    this.collapses = new Counter({ name: 'chat_push_collapsed_total', help: 'Pushes a newer one of the same chat replaced while they waited: a message of the same sender (stage="message"), or a push to the same device (stage="device")', labelNames: ['stage'], registers: [registry] });
    if (sink) {
      this.timer = setInterval(() => void this.flush(), 1_000);
      this.timer.unref();
    }
  }

  collapsed(stage: 'message' | 'device'): void {
    this.collapses.inc({ stage });
  }

  attempted(appId: string, provider: PushProvider, event: OutboxEvent, target: { userId: string; deviceId: string; messageId: string }, outcome: PushOutcome, attempt: number, nextRetryAt: number | undefined): void {
    this.attempts.inc({ provider, result: outcome.result });
    if (outcome.result === 'unconfigured') return;
    if (outcome.result === 'sent') this.latency.observe({ provider }, Math.max(0, Date.now() - eventTime(event.id)) / 1000);
    else {
      const line = { appId, provider, eventId: event.id, ...target, result: outcome.result, status: outcome.status, reason: outcome.reason, attempt, ...(nextRetryAt ? { nextRetryAt: new Date(nextRetryAt).toISOString() } : {}) };
      if (outcome.result === 'failed') this.log.warn(line, 'a push service refused a push');
      else this.log.info(line, outcome.result === 'gone' ? 'a push device is gone: removed' : 'a push will be tried again');
    }
    if (!this.sink || (outcome.result === 'sent' && !this.successLogged(`${appId} ${provider}`))) return;
    if (this.buffer.length >= MAX_BUFFER) this.buffer.shift();
    this.buffer.push({
      id: crypto.randomUUID(),
      appId,
      provider,
      eventId: event.id,
      messageId: target.messageId,
      userId: target.userId,
      deviceId: target.deviceId,
      attempt,
      result: outcome.result,
      ...(outcome.status !== undefined ? { statusCode: outcome.status } : {}),
      ...(outcome.reason ? { reason: outcome.reason.slice(0, 200) } : {}),
      durationMs: outcome.durationMs,
      ...(nextRetryAt !== undefined ? { nextRetryAt: new Date(nextRetryAt).toISOString() } : {}),
      at: new Date().toISOString(),
    });
  }

  private successLogged(key: string): boolean {
    const second = Math.floor(Date.now() / 1000);
    const seen = this.logged.get(key);
    if (seen?.second === second) return seen.n++ < LOGGED_SUCCESSES_PER_SECOND;
    if (this.logged.size > 10_000) this.logged.clear();
    this.logged.set(key, { second, n: 1 });
    return true;
  }

  /** Writes what waits; kept for the next write when the control store cannot take it. */
  async flush(): Promise<void> {
    if (this.buffer.length === 0 || !this.sink) return;
    const records = this.buffer;
    this.buffer = [];
    try {
      await this.sink(records);
    } catch (error) {
      this.log.warn({ err: String(error), records: records.length }, 'cannot write the push delivery log; kept for the next write');
      this.buffer = [...records, ...this.buffer].slice(-MAX_BUFFER);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
