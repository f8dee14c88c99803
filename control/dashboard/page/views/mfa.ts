import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLoaded, type Calls, type TotpEnrolment } from '../data.ts';
import { Field, FormError, Notice, onSubmit, useAction, WRONG_CODE, WRONG_PASSWORD } from '../forms.ts';
import { CopyButton, When } from '../widgets.ts';

/**
 * Two-factor sign-in (TOTP): enrol by scanning the QR code (or typing the secret) and confirming a
 * code, then keep the ten recovery codes, shown once; turn it off with the password and a code.
 */

/** The secret in groups of four, as authenticator apps print it, so it can be typed without losing one's place. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

/** The QR code as an image: an SVG loaded as an image runs no script, and the CSP allows data: images only. */
const qrSource = (svg: string) => `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;

export function MfaPanel({ calls }: { calls: Calls }) {
  const status = useLoaded(calls.mfaStatus, [calls]);
  const [enrolment, setEnrolment] = useState<TotpEnrolment | undefined>(undefined);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | undefined>(undefined);
  const start = useAction();

  const begin = () => void start.run(async () => setEnrolment(await calls.enrolTotp()));
  const confirmed = (codes: string[]) => {
    setEnrolment(undefined);
    setRecoveryCodes(codes);
    void status.reload();
  };

  let body;
  if (recoveryCodes) body = html`<${RecoveryCodes} codes=${recoveryCodes} onDone=${() => setRecoveryCodes(undefined)} />`;
  else if (enrolment) body = html`<${Enrol} calls=${calls} enrolment=${enrolment} onConfirmed=${confirmed} onCancel=${() => setEnrolment(undefined)} />`;
  else if (status.data?.enabled)
    body = html`<p><strong>On</strong> since <${When} iso=${status.data.enabledAt} />. ${status.data.recoveryCodesLeft} of 10 recovery codes left.</p>
      <${TurnOff} calls=${calls} onDone=${() => void status.reload()} />`;
  else if (status.data)
    body = html`<p><strong>Off.</strong> With it on, logging in takes a code from an authenticator app on your phone as well as your password.</p>
      <div class="actions"><button type="button" onClick=${begin} disabled=${start.busy}>Set up two-factor sign-in</button></div>
      <${FormError} failure=${start.failure} />`;
  else body = status.failure ? null : html`<p aria-busy="true">Loading…</p>`;

  return html`<section class="card" aria-labelledby="mfa-panel-title">
    <h2 id="mfa-panel-title">Two-factor sign-in</h2>
    ${status.failure && html`<p class="form-error" role="alert">${status.failure.message}</p>`}
    ${body}
  </section>`;
}

function Enrol({ calls, enrolment, onConfirmed, onCancel }: { calls: Calls; enrolment: TotpEnrolment; onConfirmed: (codes: string[]) => void; onCancel: () => void }) {
  const [code, setCode] = useState('');
  const { busy, failure, run } = useAction(WRONG_CODE);
  const submit = () => void run(async () => onConfirmed(await calls.confirmTotp(code.trim())));
  return html`<div class="enrol">
    <ol class="steps">
      <li>
        <p>Scan this code with an authenticator app (any app that reads TOTP codes).</p>
        <img class="qr" src=${qrSource(enrolment.qrSvg)} alt="QR code of your new two-factor secret" width="180" height="180" />
      </li>
      <li>
        <p>Can't scan it? Type this key into the app instead (time-based, 6 digits).</p>
        <dl class="facts"><div><dt>Secret key</dt><dd><code class="secret">${grouped(enrolment.secret)}</code><${CopyButton} text=${enrolment.secret} what="secret key" /></dd></div></dl>
      </li>
      <li>
        <form method="post" onSubmit=${onSubmit(submit)}>
          <${Field} label="Code from your app" name="code" autocomplete="one-time-code" inputmode="numeric" required value=${code} onValue=${setCode} failure=${failure} />
          <div class="actions">
            <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Turn on'}</button>
            <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
          </div>
          <${FormError} failure=${failure} />
        </form>
      </li>
    </ol>
  </div>`;
}

/** The ten recovery codes, once: each logs in once without the app. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const region = useRef<HTMLDivElement>(null);
  useEffect(() => region.current?.focus(), []);
  return html`<div class="recovery" tabindex="-1" ref=${region} aria-labelledby="recovery-title">
    <${Notice} text="Two-factor sign-in is on." />
    <h3 id="recovery-title">Your recovery codes</h3>
    <p class="warning" role="note"><strong>Save these now: they are shown only this once.</strong> Each one logs you in once if you lose your phone.</p>
    <ul class="codes" aria-label="Recovery codes">${codes.map((c) => html`<li key=${c}><code>${c}</code></li>`)}</ul>
    <div class="actions">
      <${CopyButton} text=${codes.join('\n')} what="recovery codes" />
      <button type="button" class="secondary" onClick=${onDone}>I have saved them</button>
    </div>
  </div>`;
}

function TurnOff({ calls, onDone }: { calls: Calls; onDone: () => void }) {
  const [currentPassword, setCurrentPassword] = useState('');
  const [code, setCode] = useState('');
  const { busy, failure, run } = useAction({ ...WRONG_CODE, ...WRONG_PASSWORD });
  const submit = () =>
    void run(async () => {
      await calls.disableTotp(currentPassword, code.trim());
      onDone();
    });
  return html`<form method="post" class="turn-off" onSubmit=${onSubmit(submit)} aria-labelledby="turn-off-title">
    <h3 id="turn-off-title">Turn two-factor sign-in off</h3>
    <${Field} label="Current password" name="currentPassword" type="password" autocomplete="current-password" required value=${currentPassword} onValue=${setCurrentPassword} failure=${failure} />
    <${Field} label="Code from your app, or a recovery code" name="code" autocomplete="one-time-code" required value=${code} onValue=${setCode} failure=${failure} />
    <div class="actions"><button type="submit" class="danger" disabled=${busy}>${busy ? 'Turning off…' : 'Turn off'}</button></div>
    <${FormError} failure=${failure} />
  </form>`;
}
