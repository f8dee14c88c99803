import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useLoaded, type Calls, type PushDelivery } from '../data.ts';
import { FormError } from '../forms.ts';
import { Badge, When } from '../widgets.ts';

/**
 * The application's push delivery log (README, "Push notifications"): the latest attempts the
 * nodes made to hand a push to Web Push, APNs or FCM, newest first, with how the push service
 * answered; one provider's on asking, and asked again on Refresh (the log grows as messages are
 * sent, and the page does not poll). Ids and outcomes only: the log never holds a message.
 */

type Provider = PushDelivery['provider'];
const PROVIDERS: Record<Provider, string> = { webPush: 'Web Push', apns: 'APNs', fcm: 'FCM' };
const TONES: Record<PushDelivery['result'], 'good' | 'bad' | 'neutral'> = { sent: 'good', gone: 'neutral', retry: 'neutral', failed: 'bad' };

export function PushDeliveries({ calls, appId }: { calls: Calls; appId: string }) {
  const [provider, setProvider] = useState<Provider | undefined>(undefined);
  const log = useLoaded(async () => ({ provider, list: await calls.listPushDeliveries(appId, provider) }), [calls, appId, provider]);
  // The render between a change of filter and its load still holds the other filter's attempts: none shown.
  const data = log.data?.provider === provider ? log.data : undefined;
  const list = data?.list ?? [];
  const through = provider ? ` through ${PROVIDERS[provider]}` : '';
  return html`<section class="push-log" aria-labelledby="push-log-title" aria-busy=${log.loading ? 'true' : 'false'}>
    <div class="section-head">
      <h3 id="push-log-title">Recent pushes</h3>
      <div class="log-controls">
        <label for="push-log-provider">Provider</label>
        <select id="push-log-provider" value=${provider ?? ''} onChange=${(e: Event) => setProvider(((e.currentTarget as HTMLSelectElement).value || undefined) as Provider | undefined)}>
          <option value="">All providers</option>
          ${Object.entries(PROVIDERS).map(([value, name]) => html`<option value=${value}>${name}</option>`)}
        </select>
        <button type="button" class="secondary" onClick=${() => void log.reload()} disabled=${log.loading} aria-label="Refresh recent pushes">Refresh</button>
      </div>
    </div>
    <p class="muted">The latest attempts to hand a push to a push service (up to 50), newest first. Ids and outcomes only: the log never holds a message.</p>
    <${FormError} failure=${log.failure} />
    <p class="offscreen" role="status">${data ? `${list.length} ${list.length === 1 ? 'attempt' : 'attempts'}${through} shown` : ''}</p>
    ${data && list.length === 0
      ? html`<p class="muted empty-log">No push attempt${through} yet. Pushes go to users who are not connected and have registered a device.</p>`
      : null}
    ${list.length > 0
      ? html`<div class="table-wrap">
          <table class="deliveries push-attempts">
            <caption class="offscreen">Push attempts${through}, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Time</th><th scope="col">Provider</th><th scope="col">Result</th><th scope="col">Reason</th><th scope="col">User</th><th scope="col">Device</th><th scope="col">Attempt</th>
              </tr>
            </thead>
            <tbody>
              ${list.map((d) => html`<${Attempt} key=${d.id} item=${d} />`)}
            </tbody>
          </table>
        </div>`
      : null}
  </section>`;
}

function Attempt({ item }: { item: PushDelivery }) {
  return html`<tr class=${item.result === 'failed' ? 'failed' : ''}>
    <th scope="row" data-label="Time"><${When} iso=${item.at} seconds /></th>
    <td data-label="Provider">${PROVIDERS[item.provider]}</td>
    <td data-label="Result"><span><${Badge} text=${item.result.toUpperCase()} tone=${TONES[item.result]} />${item.statusCode !== undefined ? html` <span class="status-code">${item.statusCode}</span>` : null}</span></td>
    <td data-label="Reason" class="attempt-error">
      <span>${item.reason ?? '—'}${item.nextRetryAt ? html`<span class="next-try">Next try <${When} iso=${item.nextRetryAt} seconds /></span>` : null}</span>
    </td>
    <td data-label="User"><code class="id">${item.userId}</code></td>
    <td data-label="Device"><code class="id">${item.deviceId}</code></td>
    <td data-label="Attempt">${item.attempt}</td>
  </tr>`;
}
