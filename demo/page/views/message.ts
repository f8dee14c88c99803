import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import type { Message } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import type { OpenConversation, ShownMessage } from '../conversation-state.ts';
import { Attachments, fileSize } from './attachments.ts';
import { preview, shortTime } from './format.ts';

/** The reactions the picker offers; any other the service accepts shows just the same. */
const REACTIONS = ['👍', '❤️', '😂', '🎉', '😮', '😢'];

interface Props {
  state: ChatState;
  conversation: OpenConversation;
  shown: ShownMessage;
  onReply: (m: Message) => void;
  onEdit: (m: Message) => void;
  /** "Seen" / "Seen by …" when this is my newest message and others have read it. */
  seen: string | undefined;
}

/**
 * One message: who and when, the message it replies to, its text (or that it was deleted), its
 * reactions (click one to add or take back yours), and what you can do with it. A send on its way
 * or refused says so, with Retry; any other refused action is explained under the message.
 */
export function MessageItem({ state, conversation, shown, onReply, onEdit, seen }: Props) {
  const { message: m, pending } = shown;
  const mine = m.senderId === state.me.userId;
  const [picking, setPicking] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const { client } = state;
  const chatId = conversation.chatId;

  // Counts over all reactions; which are mine from ownReactions, else from the latest ten the message carries.
  const own = new Set(m.ownReactions ?? m.reactions.filter((r) => r.senderId === state.me.userId).map((r) => r.reaction));
  const counts = new Map(Object.entries(m.reactionCounts).map(([reaction, n]) => [reaction, { n, mine: own.has(reaction) }]));
  const toggle = (reaction: string) => {
    setPicking(false);
    void conversation.act(m.messageId, () => (counts.get(reaction)?.mine ? client.unreact(chatId, m.messageId, reaction) : client.react(chatId, m.messageId, reaction)));
  };
  const live = !pending && !m.deleted;

  // A system message (your backend's notice) is shown apart, as the chat's own line; one that mentions me stands out.
  const forMe = !mine && (m.mentions?.includes(state.me.userId) ?? false);
  const pinned = conversation.pins.some((p) => p.messageId === m.messageId);
  const chat = state.chats.find((c) => c.chatId === chatId);
  const mayPin = chat?.type === 'direct' || chat?.role === 'owner' || chat?.role === 'admin';
  return html`<article class=${`msg${mine && m.type !== 'system' ? ' mine' : ''}${m.type === 'system' ? ' system' : ''}${forMe ? ' for-me' : ''}${m.deleted ? ' deleted' : ''}${pending ? ` ${pending}` : ''}`} data-seq=${pending ? undefined : m.seq} data-id=${m.messageId}>
    <header class="meta small">
      <span class="sender">${mine ? 'You' : state.nameOf(m.senderId)}</span>
      <time datetime=${m.timeStamp}>${shortTime(m.timeStamp)}</time>
      ${m.edited && !m.deleted ? html`<span class="edited">edited</span>` : null}
      ${pinned ? html`<span class="pinned" title="Pinned">📌 pinned</span>` : null}
    </header>
    ${m.replyTo ? html`<blockquote class="quote small"><b>${state.nameOf(m.replyTo.senderId)}</b> ${preview(m.replyTo)}</blockquote>` : null}
    ${m.deleted || m.hidden || m.content || !(m.attachments?.length || shown.upload || shown.file)
      ? html`<p class="text">${m.deleted ? html`<i>Message deleted</i>` : m.hidden ? html`<i>Hidden pending review</i>` : m.content}</p>`
      : null}
    ${m.attachments?.length && !m.deleted && !m.hidden ? html`<${Attachments} conversation=${conversation} attachments=${m.attachments} />` : null}
    ${shown.upload
      ? html`<div class="uploading small"><span>Uploading ${shown.upload.name} (${fileSize(shown.upload.total)})</span>
          <progress class="upload-progress" value=${shown.upload.sent} max=${shown.upload.total} aria-label=${`Uploading ${shown.upload.name}`}></progress></div>`
      : shown.file && pending === 'failed'
        ? html`<p class="text muted small">${shown.file.name} (${fileSize(shown.file.size)})</p>`
        : null}
    ${m.thread
      ? html`<button type="button" class="link thread-summary small" onClick=${() => void state.openThread(chatId, m)}>💬 ${m.thread.replyCount} ${m.thread.replyCount === 1 ? 'reply' : 'replies'} · last ${shortTime(m.thread.lastReplyAt)}</button>`
      : null}
    ${m.parentId ? html`<p class="muted small in-thread">replied in a thread</p>` : null}
    ${counts.size
      ? html`<div class="reactions">
          ${[...counts].map(([reaction, c]) => html`<button type="button" class="chip" aria-pressed=${c.mine} disabled=${!live} title=${c.mine ? 'Take back your reaction' : 'React the same'} onClick=${() => toggle(reaction)}>${reaction} ${c.n}</button>`)}
        </div>`
      : null}
    ${live
      ? html`<div class="actions small">
          <button type="button" class="link reply" onClick=${() => onReply(m)}>Reply</button>
          ${m.parentId === undefined && m.type !== 'system' ? html`<button type="button" class="link open-thread" onClick=${() => void state.openThread(chatId, m)}>Thread</button>` : null}
          <button type="button" class="link react" aria-expanded=${picking} onClick=${() => setPicking(!picking)}>React</button>
          ${mine && m.type !== 'system' ? html`<button type="button" class="link edit" onClick=${() => onEdit(m)}>Edit</button>` : null}
          ${mayPin ? html`<button type="button" class="link pin" onClick=${() => void conversation.pin(m.messageId, !pinned)}>${pinned ? 'Unpin' : 'Pin'}</button>` : null}
          ${mine && !confirmDelete ? html`<button type="button" class="link delete" onClick=${() => setConfirmDelete(true)}>Delete</button>` : null}
          ${mine && confirmDelete
            ? html`<span class="confirm">Delete for everyone?
                <button type="button" class="link danger confirm-delete" onClick=${() => (setConfirmDelete(false), void conversation.act(m.messageId, () => client.deleteMessage(chatId, m.messageId)))}>Delete</button>
                <button type="button" class="link" onClick=${() => setConfirmDelete(false)}>Keep</button></span>`
            : null}
        </div>`
      : null}
    ${picking
      ? html`<div class="picker" role="group" aria-label="Reactions">
          ${REACTIONS.map((r) => html`<button type="button" class="pick" onClick=${() => toggle(r)}>${r}</button>`)}
        </div>`
      : null}
    ${pending === 'sending' ? html`<p class="status small muted">Sending…</p>` : null}
    ${pending === 'failed'
      ? html`<p class="status small error" role="alert">Not sent: ${shown.error}
          ${shown.final ? null : html`<button type="button" class="link retry" onClick=${() => void (shown.file ? conversation.sendFile(state.me.userId, shown.file, shown.idempotencyKey) : conversation.send(state.me.userId, m.content, m.replyTo as Message | undefined, shown.idempotencyKey, m.mentions ?? []))}>Retry</button>`}
          <button type="button" class="link" onClick=${() => conversation.discard(shown)}>Discard</button></p>`
      : shown.error
        ? html`<p class="status small error" role="alert">${shown.error}</p>`
        : null}
    ${seen ? html`<p class="seen small muted">${seen}</p>` : null}
  </article>`;
}
