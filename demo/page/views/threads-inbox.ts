import { html } from 'htm/preact';
import type { ChatState } from '../chat-state.ts';
import { preview, shortTime } from './format.ts';

/** The threads you follow, newest activity first: the chat, the parent, and unread and mention badges. */
export function ThreadsInbox({ state }: { state: ChatState }) {
  const { inbox } = state;
  if (inbox.error) return html`<div class="error pad" role="alert">${inbox.error} <button type="button" class="link" onClick=${() => void inbox.load()}>Retry</button></div>`;
  const threads = inbox.page?.threads ?? [];
  if (threads.length === 0) return html`<p class="muted pad">No threads yet: reply to a message, or follow a thread.</p>`;
  return html`<ul class="chat-list threads-inbox" aria-label="Threads">
    ${threads.map((t) => {
      const chat = state.chats.find((c) => c.chatId === t.chatId);
      return html`<li key=${t.parentId}>
        <button type="button" class="chat-row inbox-row" data-parent=${t.parentId} aria-current=${state.thread?.parentId === t.parentId ? 'true' : undefined} onClick=${() => void state.openThread(t.chatId, t.parent)}>
          <span class="chat-main">
            <span class="chat-title">${chat ? state.titleOf(chat) : 'A chat'}</span>
            <span class="chat-last">${t.parent.senderId === state.me.userId ? 'You' : state.nameOf(t.parent.senderId)}: ${preview(t.parent)}</span>
            <span class="muted small">${t.parent.thread?.replyCount ?? 0} replies</span>
          </span>
          <span class="chat-side">
            ${t.activityAt ? html`<time class="muted small">${shortTime(t.activityAt)}</time>` : null}
            ${t.mentionCount ? html`<span class="badge mention" aria-label=${`${t.mentionCount} ${t.mentionCount === 1 ? 'mention' : 'mentions'}`}>@${t.mentionCount}</span>` : null}
            ${t.unreadCount ? html`<span class="badge" aria-label=${`${t.unreadCount} unread`}>${t.unreadCount}</span>` : null}
          </span>
        </button>
      </li>`;
    })}
  </ul>`;
}
