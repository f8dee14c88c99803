import { html } from 'htm/preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { DashboardApi, SignedOutReason } from './api.ts';
import { calls } from './data.ts';
import { go, useRoute, type Route } from './route.ts';
import { AppPage } from './views/app-page.ts';
import { AppList } from './views/apps.ts';
import { LogIn, SignUp } from './views/auth.ts';
import { ProfilePage } from './views/profile.ts';

/** The page's shell: the header, the session, and the view the address names. */

const TITLES: Record<Route['view'], string> = {
  login: 'Log in',
  signup: 'Create an account',
  apps: 'Applications',
  app: 'Application',
  profile: 'Profile and security',
};

export function App({ api }: { api: DashboardApi }) {
  const [email, setEmail] = useState(api.email);
  const [signedOut, setSignedOut] = useState<SignedOutReason | undefined>(undefined);
  const route = useRoute();
  const client = useMemo(() => calls(api), [api]);

  useEffect(
    () =>
      api.onChange((reason) => {
        setEmail(api.email);
        setSignedOut(reason);
        go(reason ? '#/login' : '#/apps');
      }),
    [api],
  );

  // A new view: say so in the title, and move focus to its heading so a screen reader reads it
  // and the next Tab starts from there rather than from the link that was followed.
  const auth = !email || route.view === 'login' || route.view === 'signup';
  const view = !email ? (route.view === 'signup' ? 'signup' : 'login') : auth ? 'apps' : route.view;
  useEffect(() => {
    document.title = `${TITLES[view]} · Chat service dashboard`;
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [view, route]);
  useEffect(() => {
    if (email && auth) go('#/apps');
  }, [email, auth]);

  if (!email) {
    return html`<div class="shell signed-out">
      <header class="top"><span class="brand">Chat service</span></header>
      <main id="main">
        ${view === 'signup' ? html`<${SignUp} api=${api} />` : html`<${LogIn} api=${api} signedOut=${signedOut} />`}
      </main>
    </div>`;
  }

  const current = (name: Route['view']) => (view === name || (name === 'apps' && view === 'app') ? 'page' : undefined);
  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${(e: Event) => {
      e.preventDefault();
      document.querySelector<HTMLElement>('main h1')?.focus();
    }}>Skip to content</a>
    <header class="top">
      <a class="brand" href="#/apps">Chat service</a>
      <nav aria-label="Main">
        <a href="#/apps" aria-current=${current('apps')}>Applications</a>
        <a href="#/profile" aria-current=${current('profile')}>Profile</a>
      </nav>
      <div class="account">
        <span class="who" title=${email}>${email}</span>
        <button type="button" class="secondary" onClick=${() => void api.logout()}>Log out</button>
      </div>
    </header>
    <main id="main">
      ${route.view === 'app' ? html`<${AppPage} key=${route.appId} calls=${client} appId=${route.appId} />` : null}
      ${view === 'apps' ? html`<${AppList} calls=${client} />` : null}
      ${view === 'profile' ? html`<${ProfilePage} calls=${client} />` : null}
    </main>
  </div>`;
}
