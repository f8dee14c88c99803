import { html } from 'htm/preact';
import type { ChatSummary } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import { preview, shortTime } from './format.ts';

/** My chats, most recent first: name, presence of a direct chat's peer, last message, unread and mention badges. */
export function ChatList({ state }: { state: ChatState }) {
  if (state.listError) {
    return html`<div class="error" role="alert">${state.listError} <button type="button" class="link" onClick=${() => void state.loadChats()}>Retry</button></div>`;
  }
  if (state.chats.length === 0) return html`<p class="muted pad">No chats yet.</p>`;
  return html`<ul class="chat-list">
    ${state.chats.map((chat) => html`<${ChatRow} key=${chat.chatId} state=${state} chat=${chat} />`)}
  </ul>`;
}

function ChatRow({ state, chat }: { state: ChatState; chat: ChatSummary }) {
  const title = state.titleOf(chat);
  const online = chat.peer ? state.online.has(chat.peer.userId) : false;
  const last = chat.lastMessage;
  const who = last ? (last.senderId === state.me.userId ? 'You: ' : chat.type === 'group' ? `${state.nameOf(last.senderId)}: ` : '') : '';
  return html`<li>
    <button type="button" class="chat-row" data-chat=${chat.chatId} aria-current=${state.open?.chatId === chat.chatId ? 'true' : undefined} onClick=${() => void state.openChat(chat.chatId)}>
      <span class="avatar" aria-hidden="true">${title.slice(0, 1).toUpperCase()}${chat.peer ? html`<i class=${`dot${online ? ' on' : ''}`}></i>` : null}</span>
      <span class="chat-main">
        <span class="chat-title">${title}${chat.peer ? html`<span class="offscreen">${online ? ' (online)' : ' (offline)'}</span>` : html`<span class="muted small"> · ${chat.memberCount} members</span>`}</span>
        <span class="chat-last">${last ? `${who}${preview(last)}` : 'No messages yet'}</span>
      </span>
      <span class="chat-side">
        ${last ? html`<time class="muted small">${shortTime(last.timeStamp)}</time>` : null}
        ${chat.threadUnreadCount ? html`<span class="badge thread" aria-label=${`${chat.threadUnreadCount} unread in threads`}>🧵${chat.threadUnreadCount}</span>` : null}
        ${chat.mentionCount ? html`<span class="badge mention" aria-label=${`${chat.mentionCount} ${chat.mentionCount === 1 ? 'mention' : 'mentions'}`}>@${chat.mentionCount}</span>` : null}
        ${chat.unreadCount ? html`<span class="badge" aria-label=${`${chat.unreadCount} unread`}>${chat.unreadCount > 999 ? '999+' : chat.unreadCount}</span>` : null}
      </span>
    </button>
  </li>`;
}
