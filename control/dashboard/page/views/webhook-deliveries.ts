import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLoaded, type Calls, type WebhookDelivery, type WebhookEndpoint } from '../data.ts';
import { FormError, useAction } from '../forms.ts';
import { Badge, When } from '../widgets.ts';

/**
 * An endpoint's delivery log (README, "Delivery log"): its recent attempts, newest first, with how
 * each was answered, and a Retry button on each failed one (the same event sent again now, with
 * the endpoint's current URL and secret). Asked again when `version` changes (a test was sent).
 */

/** How an attempt ended, in a few words. */
const outcome = (d: WebhookDelivery) => (d.statusCode !== undefined ? `HTTP ${d.statusCode}` : d.status === 'succeeded' ? 'delivered' : 'no answer');

/** What a retry came to, said in a sentence. */
const retrySaid = (d: WebhookDelivery) =>
  d.status === 'succeeded' ? `Retried: delivered, ${outcome(d)} in ${d.durationMs} ms.` : `Retried: not delivered (${d.error ?? outcome(d)}).`;

export function Deliveries({ calls, appId, hook, version }: { calls: Calls; appId: string; hook: WebhookEndpoint; version: number }) {
  const log = useLoaded(() => calls.listDeliveries(appId, hook.id), [calls, appId, hook.id, version]);
  const retry = useAction();
  const [said, setSaid] = useState<{ text: string; ok: boolean } | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const titleId = `hook-log-title-${hook.id}`;

  const again = (d: WebhookDelivery) =>
    void retry.run(async () => {
      setSaid(undefined);
      const made = await calls.retryDelivery(appId, hook.id, d.id);
      setSaid({ text: retrySaid(made), ok: made.status === 'succeeded' });
      await log.reload();
    });

  const list = log.data ?? [];
  return html`<section class="delivery-log" aria-labelledby=${titleId}>
    <div class="section-head">
      <h4 id=${titleId} tabindex="-1" ref=${heading}>Recent deliveries</h4>
      <button type="button" class="secondary" onClick=${() => void log.reload()} disabled=${log.loading} aria-label=${`Refresh deliveries of ${hook.url}`}>Refresh</button>
    </div>
    <p class="muted">The latest attempts (up to 50), newest first. A retry sends the same event, with the same <code>webhook-id</code>, again now.</p>
    <p class=${`test-said ${said && !said.ok ? 'bad' : ''}`} role="status">${retry.busy ? 'Retrying…' : (said?.text ?? '')}</p>
    <${FormError} failure=${retry.failure ?? log.failure} />
    ${log.data && list.length === 0 ? html`<p class="muted">No attempt yet: send a test event.</p>` : null}
    ${list.length > 0
      ? html`<div class="table-wrap">
          <table class="deliveries">
            <caption class="offscreen">Delivery attempts to ${hook.url}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">Duration</th><th scope="col">Error</th><th scope="col">Next retry</th>
                <th scope="col"><span class="offscreen">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              ${list.map((d) => html`<${Attempt} key=${d.id} item=${d} busy=${retry.busy} onRetry=${again} />`)}
            </tbody>
          </table>
        </div>`
      : null}
  </section>`;
}

function Attempt({ item, busy, onRetry }: { item: WebhookDelivery; busy: boolean; onRetry: (d: WebhookDelivery) => void }) {
  const failed = item.status === 'failed';
  return html`<tr class=${failed ? 'failed' : ''}>
    <th scope="row" data-label="Time"><${When} iso=${item.at} /></th>
    <td data-label="Event"><span><span class="event-type">${item.type}</span> <code class="event-id">${item.eventId}</code></span></td>
    <td data-label="Attempt">${item.attempt}</td>
    <td data-label="Status"><span><${Badge} text=${failed ? 'FAILED' : 'SUCCEEDED'} tone=${failed ? 'bad' : 'good'} />${item.statusCode !== undefined ? html` <span class="status-code">${item.statusCode}</span>` : null}</span></td>
    <td data-label="Duration">${item.durationMs} ms</td>
    <td data-label="Error" class="attempt-error">${item.error ?? '—'}</td>
    <td data-label="Next retry"><${When} iso=${item.nextRetryAt} /></td>
    <td class="row-actions">
      ${failed ? html`<button type="button" class="secondary" disabled=${busy} onClick=${() => onRetry(item)} aria-label=${`Retry attempt ${item.attempt} of ${item.eventId}`}>Retry</button>` : null}
    </td>
  </tr>`;
}
