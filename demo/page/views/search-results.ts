import { html } from 'htm/preact';
import type { SearchHit } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import { shortTime } from './format.ts';

/** The message's text with the searched words marked. */
function marked(hit: SearchHit) {
  const text = hit.message.content;
  const parts: unknown[] = [];
  let at = 0;
  for (const [start, end] of hit.matches) {
    if (start < at) continue;
    parts.push(text.slice(at, start), html`<mark>${text.slice(start, end)}</mark>`);
    at = end;
  }
  parts.push(text.slice(at));
  return parts;
}

/** Opens a hit's chat (and its thread, for a reply whose parent is on the page) and shows the message there. */
async function open(state: ChatState, hit: SearchHit): Promise<void> {
  await state.openChat(hit.chatId);
  const { parentId } = hit.message;
  const parent = parentId === undefined ? undefined : state.open?.messages.find((s) => s.message.messageId === parentId)?.message;
  if (parent) await state.openThread(hit.chatId, parent);
  const shown = document.querySelector<HTMLElement>(`.msg[data-id="${hit.message.messageId}"]`);
  if (!shown) return;
  shown.scrollIntoView({ block: 'center' });
  shown.classList.add('found');
  setTimeout(() => shown.classList.remove('found'), 2_000);
}

/** The sidebar's search hits, newest first: the chat, the sender, the text with the words marked. */
export function SearchResults({ state }: { state: ChatState }) {
  const { search } = state;
  if (search.error) return html`<p class="error pad" role="alert">${search.error}</p>`;
  if (search.hits.length === 0) return html`<p class="muted pad">${search.searching ? 'Searching…' : 'No messages found.'}</p>`;
  return html`<ul class="chat-list search-results" aria-label="Messages found">
    ${search.hits.map((hit) => {
      const chat = state.chats.find((c) => c.chatId === hit.chatId);
      const m = hit.message;
      return html`<li key=${`${hit.chatId}/${m.messageId}`}>
        <button type="button" class="chat-row search-hit" data-id=${m.messageId} onClick=${() => void open(state, hit)}>
          <span class="chat-main">
            <span class="chat-title">${chat ? state.titleOf(chat) : 'A chat'}${m.parentId ? html` <span class="muted small">· in a thread</span>` : null}</span>
            <span class="hit-text">${m.senderId === state.me.userId ? 'You' : state.nameOf(m.senderId)}: ${marked(hit)}</span>
          </span>
          <span class="chat-side"><time class="muted small">${shortTime(m.timeStamp)}</time></span>
        </button>
      </li>`;
    })}
  </ul>`;
}
