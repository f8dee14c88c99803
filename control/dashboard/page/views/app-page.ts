import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { go } from '../route.ts';
import { useLoaded, type Application, type Calls } from '../data.ts';
import { Field, FormError, Notice, onSubmit, useAction } from '../forms.ts';
import { Badge, ConfirmDialog, CopyButton, When } from '../widgets.ts';
import { statusTone } from './apps.ts';
import { KeysPanel } from './keys.ts';
import { QuickStart } from './quick-start.ts';
import { UsagePanel } from './usage.ts';
import { WebhooksPanel } from './webhooks.ts';
import { BlocklistPanel } from './blocklist.ts';
import { AttachmentSettingsPanel } from './attachment-settings.ts';
import { PushPanel } from './push.ts';

/** One application: its state, endpoint, keys, webhooks, blocklist, attachment settings, usage, quick start, and renaming or deleting it. */

const TIER_NOTES: Record<Application['tier'], string> = {
  DEMO: 'Demo tier: a limited number of users may be connected at once. The operator moves applications to Standard.',
  STANDARD: 'Standard tier: no ceiling on users connected at once.',
};

export function AppPage({ calls, appId }: { calls: Calls; appId: string }) {
  const app = useLoaded(() => calls.getApp(appId), [calls, appId]);
  if (!app.data) {
    return html`<section aria-labelledby="app-title">
      <h1 id="app-title" tabindex="-1">Application</h1>
      ${app.failure
        ? html`<p class="form-error" role="alert">${app.failure.message}</p>
            <p><a href="#/apps">Back to your applications</a></p>`
        : html`<p aria-busy="true">Loading…</p>`}
    </section>`;
  }
  const detail = app.data;
  const endpoint = detail.clusterEndpoint ?? '';
  return html`<article aria-labelledby="app-title">
    <p class="crumbs"><a href="#/apps">Applications</a> <span aria-hidden="true">›</span> <span>${detail.name}</span></p>
    <header class="app-head">
      <h1 id="app-title" tabindex="-1">${detail.name}</h1>
      <span class="badges"><${Badge} text=${detail.status} tone=${statusTone(detail.status)} /><${Badge} text=${detail.tier} /></span>
    </header>
    ${detail.status === 'SUSPENDED' ? html`<p class="warning" role="note">This application is suspended: its data and existing keys keep working, but it gets no new keys.</p>` : null}
    <section class="card" aria-labelledby="endpoint-title">
      <h2 id="endpoint-title">Cluster endpoint</h2>
      <p>Your backend calls this address with an API key; your users' browsers call it with the tokens your backend gets for them.</p>
      <div class="endpoint"><code id="cluster-endpoint">${endpoint}</code><${CopyButton} text=${endpoint} what="cluster endpoint" /></div>
      <dl class="facts">
        <div><dt>Cluster</dt><dd>${detail.clusterName} <${Badge} text=${detail.clusterStatus ?? 'ACTIVE'} tone=${(detail.clusterStatus ?? 'ACTIVE') === 'ACTIVE' ? 'good' : 'bad'} /></dd></div>
        <div><dt>Tier</dt><dd>${TIER_NOTES[detail.tier]}</dd></div>
        <div><dt>Created</dt><dd><${When} iso=${detail.createdAt} /></dd></div>
        <div><dt>Application id</dt><dd><code>${detail.id}</code></dd></div>
      </dl>
    </section>
    <${KeysPanel} calls=${calls} app=${detail} />
    <${WebhooksPanel} calls=${calls} app=${detail} />
    <${BlocklistPanel} calls=${calls} appId=${detail.id} />
    <${AttachmentSettingsPanel} calls=${calls} appId=${detail.id} />
    <${PushPanel} calls=${calls} appId=${detail.id} />
    <${UsagePanel} calls=${calls} appId=${detail.id} />
    <${QuickStart} endpoint=${endpoint} />
    <${Settings} calls=${calls} app=${detail} onRenamed=${app.set} />
  </article>`;
}

function Settings({ calls, app, onRenamed }: { calls: Calls; app: Application; onRenamed: (app: Application) => void }) {
  const [name, setName] = useState(app.name);
  const [saved, setSaved] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const rename = useAction();
  const remove = useAction();
  // The field starts from the application's name and then belongs to the person typing (an effect
  // resetting it after the first paint could undo a quick edit).

  const submit = () =>
    void rename.run(async () => {
      setSaved(false);
      const renamed = await calls.renameApp(app.id, name);
      setName(renamed.name);
      onRenamed(renamed);
      setSaved(true);
    });
  const confirmDelete = () =>
    void remove.run(async () => {
      await calls.deleteApp(app.id);
      go('#/apps');
    }).then((ok) => {
      if (!ok) setConfirming(false);
    });

  return html`<section class="card" aria-labelledby="settings-title">
    <h2 id="settings-title">Settings</h2>
    <form method="post" class="inline" onSubmit=${onSubmit(submit)}>
      <${Field} label="Application name" name="name" required maxlength=${64} value=${name} onValue=${(v: string) => (setName(v), setSaved(false))} failure=${rename.failure} />
      <div class="actions"><button type="submit" disabled=${rename.busy || name === app.name}>Rename</button></div>
    </form>
    ${saved ? html`<${Notice} text="Renamed." />` : null}
    <${FormError} failure=${rename.failure} />
    <div class="danger-zone">
      <h3>Delete this application</h3>
      <p>Its API keys stop working at once, and its users' sessions and sockets end within a second. This cannot be undone.</p>
      <button type="button" class="danger" onClick=${() => setConfirming(true)}>Delete application</button>
      <${FormError} failure=${remove.failure} />
    </div>
    ${confirming
      ? html`<${ConfirmDialog}
          title=${`Delete ${app.name}?`}
          confirmLabel="Delete application"
          danger
          busy=${remove.busy}
          onConfirm=${confirmDelete}
          onCancel=${() => setConfirming(false)}
        >
          <p>Every API key of <strong>${app.name}</strong> is revoked and its users can no longer sign in. This cannot be undone.</p>
        <//>`
      : null}
  </section>`;
}
