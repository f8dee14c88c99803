import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLoaded, type Application, type Calls, type WebhookEndpoint, type WebhookTestResult } from '../data.ts';
import { FormError, useAction, type Failure } from '../forms.ts';
import { Badge, ConfirmDialog, CopyButton, When } from '../widgets.ts';
import { Deliveries } from './webhook-deliveries.ts';
import { EndpointForm } from './webhook-form.ts';

/**
 * The application's webhook endpoints (README, "Webhooks"): adding one (its signing secret is shown
 * right away), changing its URL, events and description, sending it a test event, its recent
 * deliveries (retrying a failed one), revealing or rotating its secret, turning it off and on, and
 * deleting it. Rotating and deleting ask first.
 */

const MAX_WEBHOOKS = 5;

type Pending = { kind: 'rotate' | 'delete'; hook: WebhookEndpoint };
type Shown = { secret: string; rotated: boolean };

export function WebhooksPanel({ calls, app }: { calls: Calls; app: Application }) {
  const hooks = useLoaded(() => calls.listWebhooks(app.id), [calls, app.id]);
  const [adding, setAdding] = useState(false);
  const [created, setCreated] = useState<(WebhookEndpoint & { secret: string }) | undefined>(undefined);
  const [secrets, setSecrets] = useState<Record<string, Shown>>({});
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  const action = useAction();
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  const list = hooks.data ?? [];
  const full = list.length >= MAX_WEBHOOKS;

  const show = (id: string, shown: Shown | undefined) =>
    setSecrets((all) => {
      const { [id]: _, ...rest } = all;
      return shown ? { ...rest, [id]: shown } : rest;
    });
  const reveal = (hook: WebhookEndpoint) => {
    if (secrets[hook.id]) return show(hook.id, undefined);
    void action.run(async () => show(hook.id, { secret: await calls.revealWebhookSecret(app.id, hook.id), rotated: false }));
  };
  const toggle = (hook: WebhookEndpoint) =>
    void action.run(async () => {
      await calls.setWebhookStatus(app.id, hook.id, hook.status === 'ACTIVE' ? 'DISABLED' : 'ACTIVE');
      await hooks.reload();
    });
  const confirm = () => {
    const job = pending;
    if (!job) return;
    void action
      .run(async () => {
        if (job.kind === 'rotate') show(job.hook.id, { secret: await calls.rotateWebhookSecret(app.id, job.hook.id), rotated: true });
        else {
          await calls.deleteWebhook(app.id, job.hook.id);
          show(job.hook.id, undefined);
          if (created?.id === job.hook.id) setCreated(undefined);
          await hooks.reload();
        }
      })
      .then((ok) => {
        refocus.current = ok && job.kind === 'delete';
        setPending(undefined);
      });
  };
  // The button that opened the dialog went with its endpoint: once the dialog is closed, focus goes to the panel.
  useEffect(() => {
    if (pending || !refocus.current) return;
    refocus.current = false;
    heading.current?.focus();
  }, [pending]);

  return html`<section class="card" aria-labelledby="hooks-title">
    <div class="section-head">
      <h2 id="hooks-title" tabindex="-1" ref=${heading}>Webhooks</h2>
      <button type="button" ref=${opener} aria-expanded=${adding ? 'true' : 'false'} aria-controls="hook-form" onClick=${() => setAdding(!adding)} disabled=${full && !adding}>New endpoint</button>
    </div>
    <p>The service POSTs your application's events to these addresses, signed with each endpoint's secret. Up to ${MAX_WEBHOOKS} endpoints.</p>
    <p class="note" role="note">Each event is delivered at least once: deduplicate by its <code>webhook-id</code> header. Failed deliveries are retried for 24 hours.</p>
    ${adding
      ? html`<${EndpointForm}
          calls=${calls}
          appId=${app.id}
          onCancel=${() => {
            setAdding(false);
            opener.current?.focus();
          }}
          onSaved=${(made: WebhookEndpoint & { secret?: string }) => {
            setAdding(false);
            if (made.secret) setCreated({ ...made, secret: made.secret });
            void hooks.reload();
          }}
        />`
      : null}
    ${created ? html`<${NewSecret} hook=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${FormError} failure=${action.failure ?? hooks.failure} />
    ${hooks.data && list.length === 0 ? html`<p class="muted">No endpoint yet.</p>` : null}
    <ul class="hooks" aria-label=${`Webhook endpoints of ${app.name}`}>
      ${list.map((hook) => html`<${HookItem} key=${hook.id} calls=${calls} appId=${app.id} hook=${hook} shown=${secrets[hook.id]} busy=${action.busy} onReveal=${reveal} onToggle=${toggle} onAsk=${setPending} onChanged=${() => void hooks.reload()} />`)}
    </ul>
    ${pending
      ? html`<${ConfirmDialog}
          title=${pending.kind === 'rotate' ? 'Rotate the signing secret?' : 'Delete this endpoint?'}
          confirmLabel=${pending.kind === 'rotate' ? 'Rotate secret' : 'Delete endpoint'}
          danger=${pending.kind === 'delete'}
          busy=${action.busy}
          onConfirm=${confirm}
          onCancel=${() => setPending(undefined)}
        >
          <p class="hook-url-line"><code>${pending.hook.url}</code></p>
          ${pending.kind === 'rotate'
            ? html`<p>A new secret is made and shown here. Deliveries from now on are signed with it only: put it in your receiver, or its checks fail.</p>`
            : html`<p>Nothing more is sent to this address, and its secret is gone. This cannot be undone.</p>`}
        <//>`
      : null}
  </section>`;
}

interface ItemProps {
  calls: Calls;
  appId: string;
  hook: WebhookEndpoint;
  shown: Shown | undefined;
  busy: boolean;
  onReveal: (hook: WebhookEndpoint) => void;
  onToggle: (hook: WebhookEndpoint) => void;
  onAsk: (pending: Pending) => void;
  /** The endpoint was changed here: the list is asked again. */
  onChanged: () => void;
}

/** What a test delivery came to, said in a sentence. */
function testSaid(result: WebhookTestResult | undefined, failure: Failure | undefined): string {
  if (failure) return `Not sent: ${failure.message}`;
  if (!result) return '';
  const status = result.statusCode !== undefined ? `HTTP ${result.statusCode}` : '';
  if (result.delivered) return `Delivered: ${status} in ${result.durationMs} ms.`;
  return `Not delivered: ${[...new Set([result.error, status])].filter(Boolean).join(', ') || 'no answer'} (after ${result.durationMs} ms).`;
}

function HookItem({ calls, appId, hook, shown, busy, onReveal, onToggle, onAsk, onChanged }: ItemProps) {
  const [result, setResult] = useState<WebhookTestResult | undefined>(undefined);
  const [editing, setEditing] = useState(false);
  const [showLog, setShowLog] = useState(false);
  /** Counts the tests sent from here, so an open delivery log asks again after each. */
  const [sent, setSent] = useState(0);
  const editButton = useRef<HTMLButtonElement>(null);
  const test = useAction();
  const active = hook.status === 'ACTIVE';
  const secretId = `hook-secret-${hook.id}`;
  const logId = `hook-log-${hook.id}`;
  const send = () =>
    void test.run(async () => {
      setResult(undefined);
      try {
        setResult(await calls.testWebhook(appId, hook.id));
      } finally {
        setSent((n) => n + 1);
      }
    });
  const said = test.busy ? 'Sending…' : testSaid(result, test.failure);
  const stopEditing = () => {
    setEditing(false);
    editButton.current?.focus();
  };

  return html`<li class="hook">
    <div class="hook-head">
      <h3><code>${hook.url}</code></h3>
      <span class="hook-status">
        <${Badge} text=${hook.status} tone=${active ? 'good' : 'bad'} />
        ${!active && hook.disabledReason ? html` <span class="muted">${hook.disabledReason}</span>` : null}
      </span>
    </div>
    ${hook.description ? html`<p class="hook-description">${hook.description}</p>` : null}
    <dl class="facts">
      <div><dt>Events</dt><dd><ul class="event-list">${hook.events.map((e) => html`<li><code>${e}</code></li>`)}</ul></dd></div>
      <div><dt>Created</dt><dd><${When} iso=${hook.createdAt} /></dd></div>
    </dl>
    <div class="actions hook-actions">
      <button type="button" onClick=${send} disabled=${test.busy} aria-label=${`Send test event to ${hook.url}`}>Send test event</button>
      <button type="button" class="secondary" ref=${editButton} onClick=${() => setEditing(!editing)} aria-expanded=${editing ? 'true' : 'false'} aria-controls=${`hook-edit-${hook.id}`} aria-label=${`Edit ${hook.url}`}>Edit</button>
      <button type="button" class="secondary" onClick=${() => setShowLog(!showLog)} aria-expanded=${showLog ? 'true' : 'false'} aria-controls=${logId} aria-label=${`${showLog ? 'Hide' : 'Show'} deliveries of ${hook.url}`}>${showLog ? 'Hide deliveries' : 'Deliveries'}</button>
      <button type="button" class="secondary" onClick=${() => onReveal(hook)} disabled=${busy} aria-expanded=${shown ? 'true' : 'false'} aria-controls=${secretId} aria-label=${`${shown ? 'Hide' : 'Reveal'} secret of ${hook.url}`}>${shown ? 'Hide secret' : 'Reveal secret'}</button>
      <button type="button" class="secondary" onClick=${() => onAsk({ kind: 'rotate', hook })} disabled=${busy} aria-label=${`Rotate secret of ${hook.url}`}>Rotate secret</button>
      <button type="button" class="secondary" onClick=${() => onToggle(hook)} disabled=${busy} aria-label=${`${active ? 'Disable' : 'Enable'} ${hook.url}`}>${active ? 'Disable' : 'Enable'}</button>
      <button type="button" class="danger" onClick=${() => onAsk({ kind: 'delete', hook })} disabled=${busy} aria-label=${`Delete ${hook.url}`}>Delete</button>
    </div>
    <p class=${`test-said ${result && !result.delivered ? 'bad' : ''} ${test.failure ? 'bad' : ''}`} role="status">${said}</p>
    ${editing
      ? html`<${EndpointForm}
          calls=${calls}
          appId=${appId}
          hook=${hook}
          onCancel=${stopEditing}
          onSaved=${() => {
            stopEditing();
            onChanged();
          }}
        />`
      : null}
    <div id=${logId}>${showLog ? html`<${Deliveries} calls=${calls} appId=${appId} hook=${hook} version=${sent} />` : null}</div>
    <div id=${secretId}>
      ${shown
        ? html`<div class="hook-secret">
            ${shown.rotated ? html`<p class="notice">New secret: deliveries from now on are signed with it only.</p>` : null}
            <label for=${`${secretId}-value`}>Signing secret</label>
            <div class="token-row">
              <input id=${`${secretId}-value`} class="token" readonly value=${shown.secret} onFocus=${(e: Event) => (e.currentTarget as HTMLInputElement).select()} />
              <${CopyButton} text=${shown.secret} what="signing secret" />
            </div>
          </div>`
        : null}
    </div>
  </li>`;
}

/** The secret of the endpoint just added, with what it is for, until dismissed. */
function NewSecret({ hook, onDone }: { hook: WebhookEndpoint & { secret: string }; onDone: () => void }) {
  const region = useRef<HTMLElement>(null);
  useEffect(() => region.current?.focus(), [hook.id]);
  return html`<section class="new-key" aria-labelledby="new-hook-title" tabindex="-1" ref=${region}>
    <h3 id="new-hook-title">Endpoint added</h3>
    <p class="hook-url-line"><code>${hook.url}</code></p>
    <p class="warning" role="note">
      <strong>Copy its signing secret to your receiver.</strong> Every delivery is signed with it (<a href="https://www.standardwebhooks.com/" target="_blank" rel="noreferrer">Standard Webhooks</a>): your receiver verifies
      the <code>webhook-signature</code> header with it and drops anything else. Keep it on your servers; you can reveal or rotate it below.
    </p>
    <label for="new-hook-secret">Signing secret of the new endpoint</label>
    <div class="token-row">
      <input id="new-hook-secret" class="token" readonly value=${hook.secret} onFocus=${(e: Event) => (e.currentTarget as HTMLInputElement).select()} />
      <${CopyButton} text=${hook.secret} what="signing secret of the new endpoint" />
    </div>
    <div class="actions"><button type="button" class="secondary" onClick=${onDone}>I have stored it</button></div>
  </section>`;
}
