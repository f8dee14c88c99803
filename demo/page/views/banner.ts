import { html } from 'htm/preact';
import type { ChatState } from '../chat-state.ts';

/**
 * The connection, when it is not simply open. While reconnecting the SDK keeps sends in a queue
 * and sends them (with their idempotency keys, so never twice) once it is back, then replays what
 * the chats missed: the page says so, and keeps working.
 */
export function ConnectionBanner({ state }: { state: ChatState }) {
  if (state.status === 'reconnecting') {
    return html`<div class="banner offline" role="status">Connection lost. Reconnecting… Messages you send now go out when it is back.</div>`;
  }
  if (state.status === 'connecting') return html`<div class="banner" role="status">Connecting…</div>`;
  if (state.reconnected && state.status === 'open') return html`<div class="banner online" role="status">Back online: you are up to date.</div>`;
  return null;
}
