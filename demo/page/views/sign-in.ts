import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { listUsers, signIn, type DemoUser, type SignedIn } from '../backend.ts';

/**
 * Sign-in as any user of the demo application: a name (new names are registered), or one of the
 * names already used. A real product signs people in its own way; what matters is that its backend
 * then calls `ChatServer.signIn` and hands the tokens to the page.
 */
export function SignIn({ onSignedIn, notice }: { onSignedIn: (session: SignedIn) => void; notice?: string | undefined }) {
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [known, setKnown] = useState<DemoUser[]>([]);
  useEffect(() => {
    document.title = 'Sign in · Chat';
    listUsers().then(setKnown, () => setKnown([]));
  }, []);

  const go = async (username: string) => {
    if (!username.trim()) return setError('Type a name first.');
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await signIn(username));
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  };

  return html`<main class="sign-in">
    <h1>Chat</h1>
    <p class="muted">The reference app of the chat service. Sign in under any name; open a second window to talk to yourself.</p>
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
    <form onSubmit=${(e: Event) => {
      e.preventDefault();
      void go(name);
    }}>
      <label for="username">Your name</label>
      <div class="row">
        <input id="username" name="username" autocomplete="username" value=${name} onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} aria-describedby=${error ? 'signin-error' : undefined} />
        <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
      </div>
      ${error ? html`<p id="signin-error" class="error" role="alert">${error}</p>` : null}
    </form>
    ${known.length
      ? html`<section class="known">
          <h2>Or continue as</h2>
          <ul>
            ${known.map((u) => html`<li key=${u.userId}><button type="button" class="secondary" disabled=${busy} onClick=${() => void go(u.username)}>${u.displayName}</button></li>`)}
          </ul>
        </section>`
      : null}
  </main>`;
}
