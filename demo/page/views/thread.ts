import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Message } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import type { OpenThread } from '../thread-state.ts';
import { AttachButton, Attachments, fileSize } from './attachments.ts';
import { preview, shortTime } from './format.ts';

/**
 * A thread beside its chat: the parent, its replies (older ones on demand) and a reply box, with
 * "Also send to the chat" (showInChat) and a file button. Follow and unfollow say whether its
 * replies count for you.
 */
export function ThreadPane({ state, thread }: { state: ChatState; thread: OpenThread }) {
  const [text, setText] = useState('');
  const [alsoInChat, setAlsoInChat] = useState(false);
  const [following, setFollowing] = useState<boolean | undefined>(undefined);
  const log = useRef<HTMLDivElement>(null);
  const { client } = state;
  useEffect(() => {
    void client.threads.state(thread.chatId, thread.parentId).then((s) => setFollowing(s.following), () => undefined);
  }, [thread.parentId, thread.replies.length]);
  useEffect(() => {
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [thread.replies.length]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content || thread.sending) return;
    if (await thread.send(content, alsoInChat)) {
      setText('');
      setAlsoInChat(false);
    }
  };
  const toggleFollow = async () => {
    const s = following ? await client.threads.unfollow(thread.chatId, thread.parentId) : await client.threads.follow(thread.chatId, thread.parentId);
    setFollowing(s.following);
    state.inbox.refreshSoon();
  };
  const p = thread.parent;
  const count = p.thread?.replyCount ?? thread.replies.length;
  return html`<section class="thread-pane" aria-label="Thread">
    <header class="thread-header">
      <h2 class="thread-title">Thread</h2>
      <span class="muted small">${count} ${count === 1 ? 'reply' : 'replies'}</span>
      ${following === undefined ? null : html`<button type="button" class="link follow" aria-pressed=${following} onClick=${() => void toggleFollow()}>${following ? 'Following' : 'Follow'}</button>`}
      <button type="button" class="link close-thread" aria-label="Close thread" onClick=${() => state.closeThread()}>✕</button>
    </header>
    <div class="thread-log" ref=${log}>
      <${Reply} state=${state} m=${p} parent=${true} />
      ${thread.complete ? null : html`<p class="small center"><button type="button" class="link" onClick=${() => void thread.loadOlder()}>Older replies</button></p>`}
      ${thread.replies.map((r) => html`<${Reply} key=${r.messageId} state=${state} m=${r} parent=${false} />`)}
      ${thread.error ? html`<p class="error small" role="alert">${thread.error}</p>` : null}
    </div>
    <form class="composer thread-composer" onSubmit=${submit}>
      <div class="row">
        <input class="reply-input" aria-label="Reply in thread" placeholder="Reply in thread" autocomplete="off" value=${text} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} />
        <${AttachButton} label="Attach a file to a reply" inputClass="file-input reply-file" onFile=${(file: File) => void thread.sendFile(file, alsoInChat)} />
        <button type="submit" disabled=${thread.sending}>Reply</button>
      </div>
      ${thread.uploading
        ? html`<div class="uploading small"><span>Uploading ${thread.uploading.name} (${fileSize(thread.uploading.total)})</span>
            <progress class="upload-progress" value=${thread.uploading.sent} max=${thread.uploading.total} aria-label=${`Uploading ${thread.uploading.name}`}></progress></div>`
        : null}
      <label class="small also-in-chat"><input type="checkbox" checked=${alsoInChat} onChange=${(e: Event) => setAlsoInChat((e.target as HTMLInputElement).checked)} /> Also send to the chat</label>
    </form>
  </section>`;
}

function Reply({ state, m, parent }: { state: ChatState; m: Message; parent: boolean }) {
  const mine = m.senderId === state.me.userId;
  return html`<article class=${`msg${parent ? ' parent' : ' reply'}${mine ? ' mine' : ''}${m.deleted ? ' deleted' : ''}`} data-id=${m.messageId} data-seq=${m.seq}>
    <header class="meta small">
      <span class="sender">${mine ? 'You' : state.nameOf(m.senderId)}</span>
      <time datetime=${m.timeStamp}>${shortTime(m.timeStamp)}</time>
      ${m.showInChat ? html`<span class="muted">also in the chat</span>` : null}
    </header>
    ${m.deleted || m.content || !m.attachments?.length ? html`<p class="text">${m.deleted ? html`<i>Message deleted</i>` : preview(m)}</p>` : null}
    ${m.attachments?.length && !m.deleted && !m.hidden && state.open ? html`<${Attachments} conversation=${state.open} attachments=${m.attachments} />` : null}
    ${Object.keys(m.reactionCounts).length ? html`<p class="small">${Object.entries(m.reactionCounts).map(([r, n]) => `${r} ${n}`).join('  ')}</p>` : null}
  </article>`;
}
