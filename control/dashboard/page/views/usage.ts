import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import { useLoaded, type Calls } from '../data.ts';
import { When } from '../widgets.ts';
import { UsageChart } from './usage-chart.ts';

/**
 * The application's usage as its nodes last reported it (they flush counters every
 * USAGE_FLUSH_SECONDS, a minute by default), asked again every half minute while the page is open
 * and whenever the Refresh button is pressed.
 */

const AUTO_REFRESH_MS = 30_000;

export function UsagePanel({ calls, appId }: { calls: Calls; appId: string }) {
  const usage = useLoaded(() => calls.usage(appId), [calls, appId]);
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void usage.reload();
    }, AUTO_REFRESH_MS);
    return () => clearInterval(timer);
  }, [usage.reload]);

  const u = usage.data;
  const stat = (label: string, value: number | undefined) => html`<div class="stat"><dt>${label}</dt><dd>${value ?? '—'}</dd></div>`;
  return html`<section class="card" aria-labelledby="usage-title" aria-busy=${usage.loading ? 'true' : 'false'}>
    <div class="section-head">
      <h2 id="usage-title">Usage</h2>
      <button type="button" class="secondary" onClick=${() => void usage.reload()} disabled=${usage.loading}>Refresh usage</button>
    </div>
    ${usage.failure && html`<p class="form-error" role="alert">${usage.failure.message}</p>`}
    <dl class="stats">
      ${stat('Registered users', u?.registeredUsers)}
      ${stat('Chats', u?.chats)}
      ${stat('Messages sent', u?.messages)}
      ${stat('Connected now', u?.concurrentUsers.current)}
      ${stat('Peak connected', u?.concurrentUsers.peak)}
      <div class="stat"><dt>Files stored</dt><dd>${u ? bytesText(u.storedFileBytes) : '—'}</dd></div>
    </dl>
    ${u ? html`<p class="muted">As of <${When} iso=${u.asOf} />. Nodes report their counts about once a minute.</p>` : null}
    ${u && u.days.length > 0 ? html`<${UsageChart} days=${u.days} />` : null}
  </section>`;
}

/** 0 B, 12 KB, 3.4 MB, 1.2 GB. */
function bytesText(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} KB`;
  return `${n} B`;
}
