import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { MfaChallenge } from '../../../../sdk/management.ts';
import type { DashboardApi, SignedOutReason } from '../api.ts';
import { Field, FormError, Notice, onSubmit, useAction, WRONG_CODE } from '../forms.ts';

/** Signing up, and logging in with the second step when the account has MFA on. */

const REASONS: Record<SignedOutReason, string> = {
  logout: 'You are logged out.',
  expired: 'Your session has ended. Log in again to continue.',
};

export function LogIn({ api, signedOut }: { api: DashboardApi; signedOut?: SignedOutReason | undefined }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [challenge, setChallenge] = useState<MfaChallenge | undefined>(undefined);
  const { busy, failure, run } = useAction();

  const submit = () =>
    void run(async () => {
      const mfa = await api.login({ email: email.trim(), password });
      if (mfa) setChallenge(mfa);
    });

  if (challenge) return html`<${MfaStep} api=${api} challenge=${challenge} onRestart=${() => setChallenge(undefined)} />`;
  return html`<section class="card narrow" aria-labelledby="login-title">
    <h1 id="login-title" tabindex="-1">Log in</h1>
    ${signedOut && html`<${Notice} text=${REASONS[signedOut]} />`}
    <form method="post" onSubmit=${onSubmit(submit)}>
      <${Field} label="E-mail" name="email" type="email" autocomplete="username" required value=${email} onValue=${setEmail} failure=${failure} />
      <${Field} label="Password" name="password" type="password" autocomplete="current-password" required value=${password} onValue=${setPassword} failure=${failure} />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Logging in…' : 'Log in'}</button></div>
      <${FormError} failure=${failure} />
    </form>
    <p class="switch">New here? <a href="#/signup">Create an account</a></p>
  </section>`;
}

/** The second step: a code of the authenticator app, or one of the recovery codes. */
function MfaStep({ api, challenge, onRestart }: { api: DashboardApi; challenge: MfaChallenge; onRestart: () => void }) {
  const [code, setCode] = useState('');
  const { busy, failure, run } = useAction(WRONG_CODE);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const submit = () => void run(() => api.verifyMfa(challenge.mfaToken, code.trim()));
  return html`<section class="card narrow" aria-labelledby="mfa-title">
    <h1 id="mfa-title" tabindex="-1" ref=${heading}>Two-factor sign-in</h1>
    <p>Enter the 6-digit code your authenticator app shows for <strong>${challenge.email}</strong>. Lost the app? Enter one of your recovery codes instead.</p>
    <form method="post" onSubmit=${onSubmit(submit)}>
      <${Field} label="Code" name="code" autocomplete="one-time-code" inputmode="numeric" required value=${code} onValue=${setCode} failure=${failure} />
      <div class="actions">
        <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Verify'}</button>
        <button type="button" class="secondary" onClick=${onRestart}>Use another account</button>
      </div>
      <${FormError} failure=${failure} />
    </form>
  </section>`;
}

export function SignUp({ api }: { api: DashboardApi }) {
  const [companyName, setCompanyName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, failure, run } = useAction();
  const submit = () => void run(() => api.register({ companyName, email: email.trim(), password }));
  return html`<section class="card narrow" aria-labelledby="signup-title">
    <h1 id="signup-title" tabindex="-1">Create an account</h1>
    <p>One account holds your applications and their API keys.</p>
    <form method="post" onSubmit=${onSubmit(submit)}>
      <${Field} label="Company name" name="companyName" autocomplete="organization" required maxlength=${100} value=${companyName} onValue=${setCompanyName} failure=${failure} />
      <${Field} label="E-mail" name="email" type="email" autocomplete="email" required value=${email} onValue=${setEmail} failure=${failure} />
      <${Field}
        label="Password"
        name="password"
        type="password"
        autocomplete="new-password"
        required
        minlength=${8}
        maxlength=${128}
        hint="8 to 128 characters. A few unrelated words make a strong one."
        value=${password}
        onValue=${setPassword}
        failure=${failure}
      />
      <div class="actions"><button type="submit" disabled=${busy}>${busy ? 'Creating…' : 'Create account'}</button></div>
      <${FormError} failure=${failure} />
    </form>
    <p class="switch">Have an account? <a href="#/login">Log in</a></p>
  </section>`;
}
