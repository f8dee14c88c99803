import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { ChatApiError } from '../../../../sdk/management.ts';
import { useLoaded, type Calls, type PushSettings } from '../data.ts';
import { FormError, Notice, onSubmit, useAction } from '../forms.ts';
import { ConfirmDialog, CopyButton, When } from '../widgets.ts';
import { PushDeliveries } from './push-deliveries.ts';

/**
 * The application's push providers (README, "Push notifications"): Web Push (a contact; the
 * service makes the key pair and shows its public key), APNs (the .p8 key and its ids) and FCM (the
 * service account's key file), each saved on its own, its secret never shown again; private mode;
 * removing a provider, confirmed first. What the service refuses is said under the field it names.
 * Below them, the recent push attempts (push-deliveries.ts).
 */

type Provider = 'web-push' | 'apns' | 'fcm';
const NAMES: Record<Provider, string> = { 'web-push': 'Web Push', apns: 'APNs', fcm: 'FCM' };

/** The service's complaints (`/body/<field>[/<part>]`) by field, in the panel's words. */
function fieldErrors(error: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!(error instanceof ChatApiError)) return out;
  for (const { path, message } of error.problem.errors ?? []) {
    const [, , name, part] = path.split('/');
    if (!name || out[name]) continue;
    const said = message.charAt(0).toUpperCase() + message.slice(1);
    out[name] = part ? `The key file’s ${part} ${message}.` : `${said}.`;
  }
  return out;
}

export function PushPanel({ calls, appId }: { calls: Calls; appId: string }) {
  const state = useLoaded(() => calls.getPush(appId), [calls, appId]);
  const s = state.data;
  const [removing, setRemoving] = useState<Provider | undefined>(undefined);
  const remove = useAction();
  const privacy = useAction();
  const [asked, setAsked] = useState<boolean | undefined>(undefined);
  return html`<section class="card" aria-labelledby="push-title" aria-busy=${state.loading ? 'true' : 'false'}>
    <h2 id="push-title">Push notifications</h2>
    <p>How pushes reach your users who are not connected: browsers through Web Push, iPhones through APNs, Android through FCM. A key you save here is stored and never shown again.</p>
    ${state.failure && html`<p class="form-error" role="alert">${state.failure.message}</p>`}
    <${WebPushForm} calls=${calls} appId=${appId} settings=${s} onSaved=${state.set} onRemove=${() => setRemoving('web-push')} />
    <${ApnsForm} calls=${calls} appId=${appId} settings=${s} onSaved=${state.set} onRemove=${() => setRemoving('apns')} />
    <${FcmForm} calls=${calls} appId=${appId} settings=${s} onSaved=${state.set} onRemove=${() => setRemoving('fcm')} />
    <h3>Privacy</h3>
    <div class="field">
      <label class="check">
        <input
          type="checkbox"
          name="privateMode"
          checked=${asked ?? s?.privateMode ?? false}
          disabled=${s === undefined || privacy.busy}
          onChange=${(e: Event) => {
            const on = (e.currentTarget as HTMLInputElement).checked;
            // Shown as asked while the service answers; as stored once it has (or refused).
            setAsked(on);
            void privacy.run(async () => state.set(await calls.setPrivateMode(appId, on))).finally(() => setAsked(undefined));
          }}
        />
        Private mode: pushes carry ids only, and your app fetches the message
      </label>
    </div>
    <${FormError} failure=${privacy.failure ?? remove.failure} />
    ${removing &&
    html`<${ConfirmDialog}
      title=${`Remove ${NAMES[removing]}?`}
      confirmLabel=${`Remove ${NAMES[removing]}`}
      danger
      busy=${remove.busy}
      onCancel=${() => setRemoving(undefined)}
      onConfirm=${() =>
        void remove.run(async () => {
          await calls.removePushProvider(appId, removing);
          setRemoving(undefined);
          await state.reload();
        })}
    >
      <p>${removing === 'web-push' ? 'Its key pair is deleted: turning Web Push on again makes a new one, and every browser must subscribe again.' : 'Its key is deleted: nothing more is pushed through it.'}</p>
    <//>`}
    ${s?.updatedAt ? html`<p class="muted">Last changed <${When} iso=${s.updatedAt} />.</p>` : null}
    <${PushDeliveries} calls=${calls} appId=${appId} />
  </section>`;
}

interface FormProps {
  calls: Calls;
  appId: string;
  settings: PushSettings | undefined;
  onSaved: (s: PushSettings) => void;
  onRemove: () => void;
}

function WebPushForm({ calls, appId, settings, onSaved, onRemove }: FormProps) {
  const [subject, setSubject] = useState<string | undefined>(undefined);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const save = useAction();
  const web = settings?.webPush;
  const value = subject ?? web?.subject ?? '';
  const submit = () =>
    void save.run(async () => {
      try {
        onSaved(await calls.setWebPush(appId, value.trim()));
        setSubject(undefined);
        setErrors({});
      } catch (error) {
        setErrors(fieldErrors(error));
        throw error;
      }
    });
  return html`<form method="post" aria-label="Web Push" onSubmit=${onSubmit(submit)}>
    <h3>Web Push</h3>
    ${web
      ? html`<p>On. Public key (what browsers subscribe with): <code class="key">${web.publicKey}</code> <${CopyButton} text=${web.publicKey} what="public key" /></p>`
      : html`<p class="muted">Off. Saving a contact turns it on: the service makes the key pair.</p>`}
    <${TextField} id="push-subject" label="Contact for push services" hint="A mailto: address or an https: URL." value=${value} onValue=${(v: string) => (setSubject(v), setErrors({}))} error=${errors.subject} />
    <div class="actions">
      <button type="submit" disabled=${save.busy || settings === undefined}>${web ? 'Save contact' : 'Turn on Web Push'}</button>
      ${web && html`<button type="button" class="danger" onClick=${onRemove}>Remove Web Push</button>`}
    </div>
    ${save.failure && html`<${FormError} failure=${save.failure} />`}
  </form>`;
}

const NO_APNS = { keyId: '', teamId: '', topic: '', environment: 'production' as 'sandbox' | 'production', key: '' };

function ApnsForm({ calls, appId, settings, onSaved, onRemove }: FormProps) {
  const [f, setF] = useState(NO_APNS);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const apns = settings?.apns;
  const edit = (name: keyof typeof NO_APNS) => (v: string) => {
    setF({ ...f, [name]: v });
    setErrors({});
    setSaved(false);
  };
  const submit = () =>
    void save.run(async () => {
      try {
        onSaved(await calls.setApns(appId, { ...f, keyId: f.keyId.trim(), teamId: f.teamId.trim(), topic: f.topic.trim() }));
        setF(NO_APNS);
        setErrors({});
        setSaved(true);
      } catch (error) {
        setErrors(fieldErrors(error));
        throw error;
      }
    });
  return html`<form method="post" aria-label="APNs" onSubmit=${onSubmit(submit)}>
    <h3>APNs</h3>
    ${apns ? html`<p>On: key ${apns.keyId} of team ${apns.teamId}, for ${apns.topic} (${apns.environment}). Save a new key to replace it.</p>` : html`<p class="muted">Off.</p>`}
    <${TextField} id="push-keyId" label="Key ID" hint="10 characters, from your Apple developer account." value=${f.keyId} onValue=${edit('keyId')} error=${errors.keyId} />
    <${TextField} id="push-teamId" label="Team ID" hint="10 characters." value=${f.teamId} onValue=${edit('teamId')} error=${errors.teamId} />
    <${TextField} id="push-topic" label="Bundle ID" hint="Your app’s bundle id, such as com.example.chat." value=${f.topic} onValue=${edit('topic')} error=${errors.topic} />
    <div class="field">
      <label for="push-environment">Environment</label>
      <select id="push-environment" value=${f.environment} onChange=${(e: Event) => edit('environment')((e.currentTarget as HTMLSelectElement).value)}>
        <option value="production">Production (App Store, TestFlight)</option>
        <option value="sandbox">Sandbox (development builds)</option>
      </select>
    </div>
    <${TextField} lines id="push-key" label=".p8 key" hint="Paste the whole file, from -----BEGIN PRIVATE KEY-----." value=${f.key} onValue=${edit('key')} error=${errors.key} />
    <div class="actions">
      <button type="submit" disabled=${save.busy || settings === undefined}>Save APNs</button>
      ${apns && html`<button type="button" class="danger" onClick=${onRemove}>Remove APNs</button>`}
    </div>
    ${saved ? html`<${Notice} text="APNs saved." />` : null}
    ${save.failure && html`<${FormError} failure=${save.failure} />`}
  </form>`;
}

function FcmForm({ calls, appId, settings, onSaved, onRemove }: FormProps) {
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = useAction();
  const fcm = settings?.fcm;
  const submit = () =>
    void save.run(async () => {
      try {
        onSaved(await calls.setFcm(appId, text.trim()));
        setText('');
        setErrors({});
        setSaved(true);
      } catch (error) {
        setErrors(fieldErrors(error));
        throw error;
      }
    });
  return html`<form method="post" aria-label="FCM" onSubmit=${onSubmit(submit)}>
    <h3>FCM</h3>
    ${fcm ? html`<p>On: project ${fcm.projectId}, as ${fcm.clientEmail}. Save a new key file to replace it.</p>` : html`<p class="muted">Off.</p>`}
    <${TextField}
      lines
      id="push-serviceAccount"
      label="Service account key file"
      hint="Paste the JSON key file of a Firebase service account (Project settings, Service accounts)."
      value=${text}
      onValue=${(v: string) => (setText(v), setErrors({}), setSaved(false))}
      error=${errors.serviceAccount}
    />
    <div class="actions">
      <button type="submit" disabled=${save.busy || settings === undefined}>Save FCM</button>
      ${fcm && html`<button type="button" class="danger" onClick=${onRemove}>Remove FCM</button>`}
    </div>
    ${saved ? html`<${Notice} text="FCM saved." />` : null}
    ${save.failure && html`<${FormError} failure=${save.failure} />`}
  </form>`;
}

/** A labelled input or text area with its hint and the message about it, both announced with it. */
function TextField(p: { id: string; label: string; hint: string; value: string; onValue: (v: string) => void; error?: string | undefined; lines?: boolean }) {
  const shared = {
    id: p.id,
    value: p.value,
    spellcheck: false,
    onInput: (e: Event) => p.onValue((e.currentTarget as HTMLInputElement | HTMLTextAreaElement).value),
    'aria-invalid': p.error ? 'true' : undefined,
    'aria-describedby': [`${p.id}-hint`, p.error ? `${p.id}-error` : ''].filter(Boolean).join(' '),
  };
  return html`<div class="field">
    <label for=${p.id}>${p.label}</label>
    <p class="hint" id=${`${p.id}-hint`}>${p.hint}</p>
    ${p.lines ? html`<textarea rows="4" ...${shared}></textarea>` : html`<input ...${shared} />`}
    ${p.error && html`<p class="field-error" id=${`${p.id}-error`}>${p.error}</p>`}
  </div>`;
}
