import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../../common/index.ts';
import type { WebhookDelivery } from '../../common/webhooks/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import { eventTime } from '../../common/webhooks/index.ts';
import type { PushObserver } from './delivery.ts';
import type { PushOutcome, PushProvider } from './senders.ts';

/** The delivery log's "endpoint" of a provider: what the control service lists a provider's attempts by. */
export const pushLogEndpoint = (provider: PushProvider): string => `push:${provider}`;

/** Successful attempts logged per application and provider per second, at most (every other outcome is logged). */
const LOGGED_SUCCESSES_PER_SECOND = 10;
const MAX_BUFFER = 10_000;

/**
 * What the node keeps of its push attempts: per-provider metrics (`chat_push_attempts_total` by
 * provider and result, `chat_push_delivery_seconds` from the send to the push service's yes) and
 * the delivery log the dashboard shows, written to the control store every second beside the
 * webhooks' (the ids and the outcome of each attempt; never the message).
 */
export class PushLog implements PushObserver {
  private readonly attempts: Counter<'provider' | 'result'>;
  private readonly latency: Histogram<'provider'>;
  private buffer: WebhookDelivery[] = [];
  private readonly logged = new Map<string, { second: number; n: number }>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    registry: Registry,
    private readonly write: ((records: WebhookDelivery[]) => Promise<void>) | undefined,
    private readonly log: Logger,
  ) {
    this.attempts = new Counter({ name: 'chat_push_attempts_total', help: 'Push attempts by provider and result (sent, gone, retry, failed, unconfigured)', labelNames: ['provider', 'result'], registers: [registry] });
    this.latency = new Histogram({ name: 'chat_push_delivery_seconds', help: 'From a message being sent to its push being taken by the push service', labelNames: ['provider'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60], registers: [registry] });
    this.timer = setInterval(() => void this.flush(), 1_000);
    this.timer.unref();
  }

  attempted(appId: string, provider: PushProvider, event: OutboxEvent, target: { userId: string; deviceId: string }, outcome: PushOutcome, attempt: number, nextRetryAt: number | undefined): void {
    this.attempts.inc({ provider, result: outcome.result });
    if (outcome.result === 'sent') this.latency.observe({ provider }, Math.max(0, Date.now() - eventTime(event.id)) / 1000);
    if (!this.write || (outcome.result === 'sent' && !this.successLogged(`${appId} ${provider}`))) return;
    if (this.buffer.length >= MAX_BUFFER) this.buffer.shift();
    this.buffer.push({
      id: crypto.randomUUID(),
      appId,
      endpointId: pushLogEndpoint(provider),
      eventId: event.id,
      type: 'message.new',
      attempt,
      status: outcome.result === 'sent' ? 'succeeded' : 'failed',
      ...(outcome.status !== undefined ? { statusCode: outcome.status } : {}),
      durationMs: outcome.durationMs,
      ...(outcome.result !== 'sent' ? { error: outcome.reason ? `${outcome.result}: ${outcome.reason}` : outcome.result } : {}),
      ...(nextRetryAt !== undefined ? { nextRetryAt: new Date(nextRetryAt).toISOString() } : {}),
      at: new Date().toISOString(),
      body: JSON.stringify({ userId: target.userId, deviceId: target.deviceId, result: outcome.result }),
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

  async flush(): Promise<void> {
    if (this.buffer.length === 0 || !this.write) return;
    const records = this.buffer;
    this.buffer = [];
    await this.write(records).catch((error: unknown) => this.log.warn({ err: String(error), records: records.length }, 'cannot write the push delivery log'));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
