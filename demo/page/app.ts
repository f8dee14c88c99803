import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { savedSession, saveSession, type SignedIn } from './backend.ts';
import { ChatState } from './chat-state.ts';
import { useChatState } from './use-state.ts';
import { ConnectionBanner } from './views/banner.ts';
import { ChatList } from './views/chat-list.ts';
import { Conversation } from './views/conversation.ts';
import { NewChat } from './views/new-chat.ts';
import { NotificationsControl } from './views/notifications.ts';
import { SignIn } from './views/sign-in.ts';
import { ThreadPane } from './views/thread.ts';
import { SearchResults } from './views/search-results.ts';
import { ThreadsInbox } from './views/threads-inbox.ts';

/** Signed out: the sign-in form. Signed in: one ChatState for the session, and the chat views. */
export function App() {
  const [state, setState] = useState<ChatState | undefined>(() => {
    const saved = savedSession();
    return saved ? new ChatState(saved) : undefined;
  });
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const signIn = (session: SignedIn) => {
    saveSession(session);
    setNotice(undefined);
    setState(new ChatState(session));
  };
  const signOut = (why?: string) => {
    state?.signOut();
    setNotice(why);
    setState(undefined);
  };
  if (!state) return html`<${SignIn} onSignedIn=${signIn} notice=${notice} />`;
  return html`<${Shell} key=${state.me.userId} state=${state} onSignOut=${signOut} />`;
}

function Shell({ state, onSignOut }: { state: ChatState; onSignOut: (why?: string) => void }) {
  useChatState(state);
  const [creating, setCreating] = useState(false);
  const [startError, setStartError] = useState<string | undefined>(undefined);
  useEffect(() => {
    state.start().then(
      () => (document.body.dataset.ready = 'true'),
      (error: unknown) => setStartError(error instanceof Error ? error.message : String(error)),
    );
    return () => state.signOut();
  }, [state]);
  useEffect(() => {
    if (state.signedOut) onSignOut(`Your session ended (${state.signedOut}); sign in again.`);
  }, [state.signedOut]);

  const total = state.chats.reduce((n, c) => n + c.unreadCount, 0);
  useEffect(() => {
    document.title = `${total ? `(${total}) ` : ''}Chat · ${state.me.displayName}`;
  }, [total]);

  return html`<div class=${`shell${state.open ? ' has-open' : ''}`}>
    <aside class="sidebar" aria-label="Chats">
      <header class="me">
        <span class="avatar" aria-hidden="true">${state.me.displayName.slice(0, 1).toUpperCase()}</span>
        <strong class="me-name">${state.me.displayName}</strong>
        <button type="button" class="link" onClick=${() => void state.push.forget().finally(() => onSignOut())}>Sign out</button>
      </header>
      <div class="sidebar-actions">
        <button type="button" class="new-chat-toggle" aria-expanded=${creating} onClick=${() => setCreating(!creating)}>${creating ? 'Close' : 'New chat'}</button>
        <${NotificationsControl} state=${state} />
      </div>
      ${startError ? html`<p class="error" role="alert">Could not connect: ${startError}</p>` : null}
      ${creating ? html`<${NewChat} state=${state} onDone=${() => setCreating(false)} />` : null}
      <input
        type="search"
        class="search-input"
        aria-label="Search messages"
        placeholder="Search messages"
        value=${state.search.query}
        onInput=${(e: Event) => state.search.type((e.target as HTMLInputElement).value)}
        onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && state.search.clear()}
      />
      <div class="tabs" role="tablist" aria-label="Show">
        <button type="button" role="tab" class="tab" aria-selected=${state.sidebar === 'chats'} onClick=${() => state.showSidebar('chats')}>Chats</button>
        <button type="button" role="tab" class="tab threads-tab" aria-selected=${state.sidebar === 'threads'} onClick=${() => state.showSidebar('threads')}>
          Threads${state.inbox.unreadThreads ? html` <span class="badge" aria-label=${`${state.inbox.unreadThreads} with unread replies`}>${state.inbox.unreadThreads}</span>` : null}
        </button>
      </div>
      ${state.search.active ? html`<${SearchResults} state=${state} />` : state.sidebar === 'chats' ? html`<${ChatList} state=${state} />` : html`<${ThreadsInbox} state=${state} />`}
    </aside>
    <main class=${`conversation-pane${state.thread ? ' with-thread' : ''}`}>
      ${state.open
        ? html`<${Conversation} key=${state.open.chatId} state=${state} conversation=${state.open} />`
        : html`<div class="empty"><p>Pick a chat, or start one with <b>New chat</b>.</p></div>`}
      ${state.thread ? html`<${ThreadPane} key=${state.thread.parentId} state=${state} thread=${state.thread} />` : null}
    </main>
    <${ConnectionBanner} state=${state} />
  </div>`;
}
