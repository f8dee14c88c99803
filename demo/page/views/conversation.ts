import { html } from 'htm/preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Message } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import type { OpenConversation } from '../conversation-state.ts';
import { useChatState } from '../use-state.ts';
import { Composer, type Draft } from './composer.ts';
import { MessageItem } from './message.ts';
import { MuteToggle } from './notifications.ts';
import { preview } from './format.ts';

/** Older messages are asked for when the reader scrolls this close to the top. */
const LOAD_OLDER_WITHIN_PX = 300;

/**
 * The open chat: header (who, presence), the messages (an older page loads as you scroll up, and
 * your place is kept), "seen by" under your newest message, who is typing, and the composer.
 */
export function Conversation({ state, conversation }: { state: ChatState; conversation: OpenConversation }) {
  useChatState(state);
  const log = useRef<HTMLDivElement>(null);
  const [draft, setDraft] = useState<Draft>({ kind: 'new' });
  const [showPins, setShowPins] = useState(false);
  // Where the reader is, measured at each scroll: from the bottom (kept when a page is put in
  // front), and whether at the bottom (then new messages scroll into view).
  const place = useRef({ fromBottom: 0, atBottom: true, prepended: conversation.prepended, count: 0 });
  const chat = state.chats.find((c) => c.chatId === conversation.chatId);

  const onScroll = () => {
    const el = log.current!;
    place.current.fromBottom = el.scrollHeight - el.scrollTop;
    place.current.atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
    if (el.scrollTop < LOAD_OLDER_WITHIN_PX) void conversation.loadOlder();
  };
  useLayoutEffect(() => {
    const el = log.current;
    if (!el) return;
    const p = place.current;
    if (p.prepended !== conversation.prepended) {
      p.prepended = conversation.prepended;
      el.scrollTop = el.scrollHeight - p.fromBottom;
    } else if (conversation.messages.length !== p.count && p.atBottom) {
      el.scrollTop = el.scrollHeight;
    }
    p.count = conversation.messages.length;
    p.fromBottom = el.scrollHeight - el.scrollTop;
    // A first page that does not fill the view cannot be scrolled: ask for the next one now.
    if (el.scrollHeight <= el.clientHeight + LOAD_OLDER_WITHIN_PX && !conversation.complete && conversation.messages.length > 0) void conversation.loadOlder();
  });

  const title = chat ? state.titleOf(chat) : '';
  const others = conversation.members.filter((m) => m.userId !== state.me.userId);
  const onlineCount = others.filter((m) => state.online.has(m.userId)).length;
  const subtitle = chat?.type === 'direct' ? (chat.peer && state.online.has(chat.peer.userId) ? 'online' : 'offline') : `${conversation.members.length} members, ${onlineCount} online`;
  const typing = [...conversation.typing.keys()].filter((id) => id !== state.me.userId).map((id) => state.nameOf(id));
  const seenBy = seenLine(state, conversation);

  return html`<section class="conversation" aria-label=${title}>
    <header class="conv-header">
      <button type="button" class="back" aria-label="Back to chats" onClick=${() => state.closeChat()}>‹</button>
      <div>
        <h1 class="conv-title">${title}</h1>
        <p class="conv-sub muted small">${subtitle}</p>
      </div>
      <${MuteToggle} state=${state} chatId=${conversation.chatId} />
      <button type="button" class="link pins-toggle" aria-expanded=${showPins} onClick=${() => setShowPins(!showPins)}>📌 ${conversation.pins.length}</button>
    </header>
    ${showPins
      ? html`<section class="pins" aria-label="Pinned messages">
          ${conversation.pins.length === 0 ? html`<p class="muted small">Nothing pinned yet.</p>` : null}
          ${conversation.pins.map(
            (p) => html`<p class="pin-row small" data-id=${p.messageId}><b>${state.nameOf(p.message.senderId)}</b> ${preview(p.message)} <span class="muted">· pinned by ${p.pinnedBy === state.me.userId ? 'you' : state.nameOf(p.pinnedBy)}</span></p>`,
          )}
        </section>`
      : null}
    <div class="log" ref=${log} onScroll=${onScroll} role="log" aria-live="polite" aria-relevant="additions">
      ${conversation.complete
        ? html`<p class="history-start muted small">${conversation.messages.length ? 'The start of this chat' : 'No messages yet: say hello.'}</p>`
        : html`<p class="history-more muted small">${conversation.loadingOlder ? 'Loading older messages…' : 'Scroll up for older messages'}</p>`}
      ${conversation.error ? html`<p class="error" role="alert">${conversation.error} <button type="button" class="link" onClick=${() => void (conversation.messages.length ? conversation.loadOlder() : conversation.load())}>Retry</button></p>` : null}
      ${conversation.messages.map(
        (shown) => html`<${MessageItem}
          key=${shown.message.messageId}
          state=${state}
          conversation=${conversation}
          shown=${shown}
          onReply=${(m: Message) => setDraft({ kind: 'reply', to: m })}
          onEdit=${(m: Message) => setDraft({ kind: 'edit', message: m })}
          seen=${seenBy?.messageId === shown.message.messageId ? seenBy.text : undefined}
        />`,
      )}
    </div>
    <p class="typing muted small" aria-live="polite">${typing.length ? `${typing.join(', ')} ${typing.length === 1 ? 'is' : 'are'} typing…` : ''}</p>
    <${Composer} state=${state} conversation=${conversation} draft=${draft} setDraft=${setDraft} />
  </section>`;
}

/** "Seen" (direct) or "Seen by …" (group) under my newest stored message, from the members' read marks. */
function seenLine(state: ChatState, conversation: OpenConversation): { messageId: string; text: string } | undefined {
  const mine = conversation.messages.filter((m) => !m.pending && m.message.senderId === state.me.userId).at(-1)?.message;
  if (!mine) return undefined;
  const readers = conversation.members.filter((m) => m.userId !== state.me.userId && m.readSeq >= mine.seq);
  if (readers.length === 0) return undefined;
  const chat = state.chats.find((c) => c.chatId === conversation.chatId);
  return { messageId: mine.messageId, text: chat?.type === 'direct' ? 'Seen' : `Seen by ${readers.map((r) => state.nameOf(r.userId)).join(', ')}` };
}
