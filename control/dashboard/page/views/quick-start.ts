import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { Snippet } from '../widgets.ts';

/**
 * First calls against this application's endpoint, ready to paste. The key is never written into
 * them: it stays in `$CHAT_API_KEY` on the reader's machine, so a snippet copied into a chat, a
 * ticket or a screenshot gives nothing away.
 */

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

export const curlSnippet = (endpoint: string) => `export CHAT_ENDPOINT=${shellQuote(endpoint)}
export CHAT_API_KEY='paste the key you created here'

# the cluster accepts the key: which application and key it is
curl -s "$CHAT_ENDPOINT/api/server/whoami" -H "authorization: Bearer $CHAT_API_KEY"

# register one of your users (once), then sign them in: {jwt, refreshToken, userId, expiresIn}
curl -s -X POST "$CHAT_ENDPOINT/api/users" -H "authorization: Bearer $CHAT_API_KEY" \\
  -H 'content-type: application/json' -d '{"username":"alice","displayName":"Alice"}'
curl -s -X POST "$CHAT_ENDPOINT/api/users/signin" -H "authorization: Bearer $CHAT_API_KEY" \\
  -H 'content-type: application/json' -d '{"username":"alice"}'`;

export const sdkSnippet = (endpoint: string) => `// On your backend, with the SDK's server entry: it holds the API key.
import { ChatServer } from 'chat-service/server';

const chat = new ChatServer({ baseUrl: ${JSON.stringify(endpoint)}, apiKey: process.env.CHAT_API_KEY! });

export async function chatSessionFor(username: string) {
  const user = await chat.registerUser({ username }).catch(() => undefined);
  // { jwt, refreshToken, userId, expiresIn }: hand it to the browser's ChatClient
  return chat.signIn(user ? { userId: user.userId } : { username });
}`;

const TABS = [
  { id: 'curl', label: 'curl', make: curlSnippet, what: 'curl commands' },
  { id: 'sdk', label: 'Node.js SDK', make: sdkSnippet, what: 'SDK example' },
] as const;

export function QuickStart({ endpoint }: { endpoint: string }) {
  const [tab, setTab] = useState<(typeof TABS)[number]['id']>('curl');
  const current = TABS.find((t) => t.id === tab) ?? TABS[0];
  // Arrow keys move between tabs, as the WAI-ARIA tabs pattern has it; Tab goes on to the panel.
  const onKey = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    event.preventDefault();
    const next = TABS[(TABS.indexOf(current) + (event.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]!;
    setTab(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };
  return html`<section class="card" aria-labelledby="quick-title">
    <h2 id="quick-title">Quick start</h2>
    <p>From your backend, with the key in <code>CHAT_API_KEY</code>. The README's "Backend flow" and "The SDK" go further.</p>
    <div role="tablist" aria-label="Quick start examples" class="tabs" onKeyDown=${onKey}>
      ${TABS.map(
        (t) => html`<button
          type="button"
          role="tab"
          id=${`tab-${t.id}`}
          aria-selected=${t.id === tab ? 'true' : 'false'}
          aria-controls="quick-panel"
          tabindex=${t.id === tab ? 0 : -1}
          onClick=${() => setTab(t.id)}
        >${t.label}</button>`,
      )}
    </div>
    <div id="quick-panel" role="tabpanel" aria-labelledby=${`tab-${current.id}`}>
      <${Snippet} code=${current.make(endpoint)} what=${current.what} />
    </div>
  </section>`;
}
