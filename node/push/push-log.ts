import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from '../../common/index.ts';
import { eventTime } from '../../common/webhooks/index.ts';
import type { OutboxEvent } from '../store/index.ts';
import type { PushObserver } from './delivery.ts';
import type { PushOutcome, PushProvider } from './senders.ts';

/**
 * What the node keeps of its push attempts: per-provider metrics (`chat_push_attempts_total` by
 * provider and result, `chat_push_delivery_seconds` from the send to the push service's yes) and a
 * log line for each refusal (ids and the outcome; never the message).
 */
export class PushLog implements PushObserver {
  private readonly attempts: Counter<'provider' | 'result'>;
  private readonly latency: Histogram<'provider'>;

  constructor(
    registry: Registry,
    private readonly log: Logger,
  ) {
    this.attempts = new Counter({ name: 'chat_push_attempts_total', help: 'Push attempts by provider and result (sent, gone, retry, failed, unconfigured)', labelNames: ['provider', 'result'], registers: [registry] });
    this.latency = new Histogram({ name: 'chat_push_delivery_seconds', help: 'From a message being sent to its push being taken by the push service', labelNames: ['provider'], buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60], registers: [registry] });
  }

  attempted(appId: string, provider: PushProvider, event: OutboxEvent, target: { userId: string; deviceId: string }, outcome: PushOutcome, attempt: number, nextRetryAt: number | undefined): void {
    this.attempts.inc({ provider, result: outcome.result });
    if (outcome.result === 'sent') return this.latency.observe({ provider }, Math.max(0, Date.now() - eventTime(event.id)) / 1000);
    if (outcome.result === 'unconfigured') return;
    const line = { appId, provider, eventId: event.id, ...target, result: outcome.result, status: outcome.status, reason: outcome.reason, attempt, ...(nextRetryAt ? { nextRetryAt: new Date(nextRetryAt).toISOString() } : {}) };
    if (outcome.result === 'failed') this.log.warn(line, 'a push service refused a push');
    else this.log.info(line, outcome.result === 'gone' ? 'a push device is gone: removed' : 'a push will be tried again');
  }
}
