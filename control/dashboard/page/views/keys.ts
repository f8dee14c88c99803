import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLoaded, type ApiKey, type Application, type Calls, type KeySummary } from '../data.ts';
import { FormError, useAction } from '../forms.ts';
import { Badge, ConfirmDialog, CopyButton, When } from '../widgets.ts';

/**
 * The application's API keys. A new key's token is on screen once, right after it is created or
 * rotated, and nowhere else: the service keeps only its hash. Revoking and rotating ask first.
 * Keys are named by the start of their id: every token starts with the same JWT header, so the
 * prefix (the token's first 8 characters) tells keys apart only in deployments that change it.
 */

const MAX_ACTIVE_KEYS = 5;

/** How a key is named on the page. */
export const shortId = (key: { id: string }) => key.id.slice(0, 8);

type Pending = { kind: 'revoke' | 'rotate'; key: KeySummary };

export function KeysPanel({ calls, app }: { calls: Calls; app: Application }) {
  const keys = useLoaded(() => calls.listKeys(app.id), [calls, app.id]);
  const [fresh, setFresh] = useState<{ key: ApiKey; replaces?: string } | undefined>(undefined);
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const action = useAction();
  const active = (keys.data ?? []).filter((k) => k.status === 'ACTIVE').length;

  const create = () =>
    void action.run(async () => {
      setFresh({ key: await calls.createKey(app.id) });
      await keys.reload();
    });
  const confirm = () => {
    const job = pending;
    if (!job) return;
    void action
      .run(async () => {
        if (job.kind === 'rotate') setFresh({ key: await calls.rotateKey(app.id, job.key.id), replaces: shortId(job.key) });
        else await calls.revokeKey(app.id, job.key.id);
        await keys.reload();
      })
      .then(() => setPending(undefined));
  };

  return html`<section class="card" aria-labelledby="keys-title">
    <div class="section-head">
      <h2 id="keys-title">API keys</h2>
      <button type="button" onClick=${create} disabled=${action.busy || active >= MAX_ACTIVE_KEYS || app.status === 'SUSPENDED'}>Create API key</button>
    </div>
    <p>Your backend sends a key as <code>Authorization: Bearer …</code> to the cluster endpoint. Keep keys on your servers only. Up to ${MAX_ACTIVE_KEYS} may be active.</p>
    <${FormError} failure=${action.failure ?? keys.failure} />
    ${fresh ? html`<${NewKey} key=${fresh.key.id} created=${fresh.key} replaces=${fresh.replaces} onDone=${() => setFresh(undefined)} />` : null}
    <div class="table-wrap">
      <table class="keys">
        <caption class="offscreen">API keys of ${app.name}</caption>
        <thead>
          <tr><th scope="col">Key</th><th scope="col">Token</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Status</th><th scope="col"><span class="offscreen">Actions</span></th></tr>
        </thead>
        <tbody>
          ${(keys.data ?? []).map((key) => html`<${KeyRow} key=${key.id} item=${key} busy=${action.busy} onAsk=${setPending} />`)}
          ${keys.data && keys.data.length === 0 ? html`<tr><td colspan="6">No key yet.</td></tr>` : null}
        </tbody>
      </table>
    </div>
    ${pending
      ? html`<${ConfirmDialog}
          title=${`${pending.kind === 'rotate' ? 'Rotate' : 'Revoke'} key ${shortId(pending.key)}?`}
          confirmLabel=${pending.kind === 'rotate' ? 'Rotate key' : 'Revoke key'}
          danger=${pending.kind === 'revoke'}
          busy=${action.busy}
          onConfirm=${confirm}
          onCancel=${() => setPending(undefined)}
        >
          ${pending.kind === 'rotate'
            ? html`<p>A new key is created and shown once. The old key stops working at once: put the new one in place before your backend's next call.</p>`
            : html`<p>Calls with this key are refused within a second, on every node. This cannot be undone.</p>`}
        <//>`
      : null}
  </section>`;
}

function KeyRow({ item, busy, onAsk }: { item: KeySummary; busy: boolean; onAsk: (p: Pending) => void }) {
  const revoked = item.status === 'REVOKED';
  return html`<tr class=${revoked ? 'revoked' : ''}>
    <th scope="row" data-label="Key"><code>${shortId(item)}</code></th>
    <td data-label="Token"><code>${item.keySuffix ? `…${item.keySuffix}` : `${item.keyPrefix}…`}</code></td>
    <td data-label="Created"><${When} iso=${item.createdAt} /></td>
    <td data-label="Last used"><${When} iso=${item.lastUsedAt} none="Never" /></td>
    <td data-label="Status">${revoked ? html`<${Badge} text="REVOKED" tone="bad" /> <${When} iso=${item.revokedAt} />` : html`<${Badge} text="ACTIVE" tone="good" />`}</td>
    <td class="row-actions">
      ${revoked
        ? null
        : html`<button type="button" class="secondary" disabled=${busy} onClick=${() => onAsk({ kind: 'rotate', key: item })} aria-label=${`Rotate key ${shortId(item)}`}>Rotate</button>
            <button type="button" class="danger" disabled=${busy} onClick=${() => onAsk({ kind: 'revoke', key: item })} aria-label=${`Revoke key ${shortId(item)}`}>Revoke</button>`}
    </td>
  </tr>`;
}

/** The token of a key just created: shown this once, with a copy button, until dismissed. */
function NewKey({ created, replaces, onDone }: { created: ApiKey; replaces?: string | undefined; onDone: () => void }) {
  const region = useRef<HTMLElement>(null);
  useEffect(() => region.current?.focus(), [created.id]);
  return html`<section class="new-key" aria-labelledby="new-key-title" tabindex="-1" ref=${region}>
    <h3 id="new-key-title">${replaces ? `Key ${shortId(created)} replaces key ${replaces}` : `Your new API key ${shortId(created)}`}</h3>
    <p class="warning" role="note"><strong>Copy it now: it is shown only this once.</strong> The service keeps only a hash of it. Anyone holding it can act as this application, so keep it on your servers, never in a page or an app.</p>
    <label for="new-key-token">API key ${shortId(created)}</label>
    <div class="token-row">
      <input id="new-key-token" class="token" readonly value=${created.token} onFocus=${(e: Event) => (e.currentTarget as HTMLInputElement).select()} />
      <${CopyButton} text=${created.token} what="API key" />
    </div>
    <div class="actions"><button type="button" class="secondary" onClick=${onDone}>I have stored it</button></div>
  </section>`;
}
