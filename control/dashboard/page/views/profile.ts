import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { useLoaded, type Calls, type Profile } from '../data.ts';
import { Field, FormError, Notice, onSubmit, useAction, WRONG_PASSWORD } from '../forms.ts';
import { When } from '../widgets.ts';
import { MfaPanel } from './mfa.ts';

/** The account: company name, e-mail and password, and two-factor sign-in. */

export function ProfilePage({ calls }: { calls: Calls }) {
  const profile = useLoaded(calls.profile, [calls]);
  return html`<section aria-labelledby="profile-title">
    <h1 id="profile-title" tabindex="-1">Profile and security</h1>
    <div class="grid">
      <section class="card" aria-labelledby="account-title">
        <h2 id="account-title">Account</h2>
        ${profile.failure && html`<p class="form-error" role="alert">${profile.failure.message}</p>`}
        ${profile.data ? html`<${ProfileForm} calls=${calls} profile=${profile.data} onSaved=${profile.set} />` : !profile.failure && html`<p aria-busy="true">Loading…</p>`}
      </section>
      <${MfaPanel} calls=${calls} />
    </div>
  </section>`;
}

function ProfileForm({ calls, profile, onSaved }: { calls: Calls; profile: Profile; onSaved: (p: Profile) => void }) {
  const [companyName, setCompanyName] = useState(profile.companyName);
  const [email, setEmail] = useState(profile.email);
  const [password, setPassword] = useState('');
  const [currentPassword, setCurrentPassword] = useState('');
  const [saved, setSaved] = useState('');
  const { busy, failure, run } = useAction(WRONG_PASSWORD);
  // The fields start from the profile and then belong to the person typing: a reload of the
  // profile (a token refresh re-runs the load) must not wipe what they typed.

  // Only what changed is sent; the service asks for the current password to change e-mail or password.
  const changes = {
    ...(companyName !== profile.companyName ? { companyName } : {}),
    ...(email.trim().toLowerCase() !== profile.email ? { email: email.trim() } : {}),
    ...(password ? { password } : {}),
  };
  const sensitive = 'email' in changes || 'password' in changes;
  const submit = () =>
    void run(async () => {
      setSaved('');
      const updated = await calls.updateProfile({ ...changes, ...(sensitive ? { currentPassword } : {}) });
      setPassword('');
      setCurrentPassword('');
      setCompanyName(updated.companyName);
      setEmail(updated.email);
      onSaved(updated);
      setSaved(changes.password ? 'Saved. Your other sessions have ended; this one goes on.' : 'Saved.');
    });

  return html`<form method="post" onSubmit=${onSubmit(submit)}>
    <${Field} label="Company name" name="companyName" autocomplete="organization" required maxlength=${100} value=${companyName} onValue=${setCompanyName} failure=${failure} />
    <${Field} label="E-mail" name="email" type="email" autocomplete="email" required value=${email} onValue=${setEmail} failure=${failure} />
    <${Field}
      label="New password"
      name="password"
      type="password"
      autocomplete="new-password"
      minlength=${8}
      maxlength=${128}
      hint="Leave empty to keep your password. Changing it logs out your other sessions."
      value=${password}
      onValue=${setPassword}
      failure=${failure}
    />
    ${sensitive
      ? html`<${Field}
          label="Current password"
          name="currentPassword"
          type="password"
          autocomplete="current-password"
          required
          hint="Needed to change your e-mail or password."
          value=${currentPassword}
          onValue=${setCurrentPassword}
          failure=${failure}
        />`
      : null}
    <div class="actions"><button type="submit" disabled=${busy || Object.keys(changes).length === 0}>${busy ? 'Saving…' : 'Save changes'}</button></div>
    ${saved ? html`<${Notice} text=${saved} />` : null}
    <${FormError} failure=${failure} />
    <p class="muted">Account created <${When} iso=${profile.createdAt} />.</p>
  </form>`;
}
