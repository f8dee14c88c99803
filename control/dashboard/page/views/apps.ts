import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { go } from '../route.ts';
import { useLoaded, type Application, type Calls } from '../data.ts';
import { Field, FormError, onSubmit, useAction } from '../forms.ts';
import { Badge, When } from '../widgets.ts';

/** The account's applications, and the form that creates one. */

const MAX_APPLICATIONS = 5;

export const statusTone = (status: Application['status']) => (status === 'ACTIVE' ? 'good' : 'bad');

export function AppList({ calls }: { calls: Calls }) {
  const apps = useLoaded(calls.listApps, [calls]);
  const [name, setName] = useState('');
  const { busy, failure, run } = useAction();
  const create = () =>
    void run(async () => {
      const created = await calls.createApp(name);
      go(`#/apps/${encodeURIComponent(created.id)}`);
    });
  const list = apps.data ?? [];
  return html`<section aria-labelledby="apps-title">
    <h1 id="apps-title" tabindex="-1">Applications</h1>
    <p class="lead">Each application has its own users, chats and API keys, and an endpoint on a cluster. An account has up to ${MAX_APPLICATIONS}.</p>
    <div class="grid">
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Your applications</h2>
        ${apps.failure && html`<p class="form-error" role="alert">${apps.failure.message}</p>`}
        ${apps.loading && !apps.data ? html`<p aria-busy="true">Loading…</p>` : null}
        ${apps.data && list.length === 0 ? html`<p>No application yet. Create the first one with the form.</p>` : null}
        <ul class="app-list">
          ${list.map(
            (app) => html`<li key=${app.id}>
              <a href=${`#/apps/${encodeURIComponent(app.id)}`} class="app-name">${app.name}</a>
              <span class="badges"><${Badge} text=${app.status} tone=${statusTone(app.status)} /><${Badge} text=${app.tier} /></span>
              <span class="muted">Created <${When} iso=${app.createdAt} /></span>
            </li>`,
          )}
        </ul>
      </section>
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create an application</h2>
        <form method="post" onSubmit=${onSubmit(create)}>
          <${Field} label="Application name" name="name" required maxlength=${64} value=${name} onValue=${setName} failure=${failure} hint="You can rename it later." />
          <div class="actions">
            <button type="submit" disabled=${busy || list.length >= MAX_APPLICATIONS}>${busy ? 'Creating…' : 'Create application'}</button>
          </div>
          ${list.length >= MAX_APPLICATIONS ? html`<p class="muted">You have ${MAX_APPLICATIONS} applications: delete one to create another.</p>` : null}
          <${FormError} failure=${failure} />
        </form>
      </section>
    </div>
  </section>`;
}
