import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import type { ChatState } from '../chat-state.ts';

/** What each state says, and the button it offers. */
const SAYS = {
  checking: 'Notifications…',
  unsupported: 'Notifications need a browser with push, on https or localhost.',
  'not-configured': 'Notifications are not configured for this app.',
  blocked: "Notifications are blocked for this site: allow them in the browser's site settings.",
  off: 'Notifications are off.',
  working: 'Notifications…',
  on: 'Notifications are on.',
} as const;

/**
 * The sidebar's notifications line: where this browser's push notifications stand (push-state.ts)
 * and the one action that makes sense from there.
 */
export function NotificationsControl({ state }: { state: ChatState }) {
  const status = state.push.status;
  const text = status.kind === 'failed' ? `Notifications failed: ${status.reason}` : SAYS[status.kind];
  const action =
    status.kind === 'on'
      ? html`<button type="button" class="link notifications-toggle" onClick=${() => void state.push.turnOff()}>Turn off</button>`
      : status.kind === 'off' || status.kind === 'failed'
        ? html`<button type="button" class="link notifications-toggle" onClick=${() => void state.push.turnOn()}>${status.kind === 'off' ? 'Turn on' : 'Try again'}</button>`
        : null;
  return html`<p class=${`notifications small${status.kind === 'failed' ? ' error' : ' muted'}`} data-state=${status.kind} role="status">
    <span aria-hidden="true">${status.kind === 'on' ? '🔔' : '🔕'}</span> <span class="notifications-text">${text}</span> ${action}
  </p>`;
}

/** The open chat's "mute notifications" switch: the user's setting on the service, for every device of theirs. */
export function MuteToggle({ state, chatId }: { state: ChatState; chatId: string }) {
  useEffect(() => void state.push.loadMute(chatId), [chatId]);
  const muted = state.push.muted.get(chatId);
  if (muted === undefined) return null;
  const error = state.push.muteError?.chatId === chatId ? state.push.muteError.reason : undefined;
  return html`<label class="mute-toggle small">
    <input type="checkbox" checked=${muted} onChange=${(e: Event) => void state.push.setMute(chatId, (e.target as HTMLInputElement).checked)} />
    ${' '}Mute notifications${error ? html` <span class="error" role="alert">(not changed: ${error})</span>` : null}
  </label>`;
}
