import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Message } from '../../../sdk/client.ts';
import type { ChatState } from '../chat-state.ts';
import type { OpenConversation } from '../conversation-state.ts';
import { preview } from './format.ts';
import { AttachButton } from './attachments.ts';

/** What the composer writes: a new message, a reply, or an edit of one of mine. */
export type Draft = { kind: 'new' } | { kind: 'reply'; to: Message } | { kind: 'edit'; message: Message };

/** `typing.start` again after this while still typing (the service forgets a typist after a while). */
const TYPING_REPEAT_MS = 3000;
/** `typing.stop` after this long without a keystroke. */
const TYPING_IDLE_MS = 2000;

/**
 * The message box. Enter sends (or saves an edit), Escape cancels a reply or an edit. Typing is
 * announced while keys are pressed, at most every few seconds, and withdrawn when you pause or send.
 * "@" offers the chat's members by name; a picked one is mentioned when the message goes.
 */
export function Composer({ state, conversation, draft, setDraft }: { state: ChatState; conversation: OpenConversation; draft: Draft; setDraft: (d: Draft) => void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  // Members picked from the @-list while writing this message, by the name put in the text.
  const [picked, setPicked] = useState<Map<string, string>>(new Map());
  const input = useRef<HTMLInputElement>(null);
  const typing = useRef({ sentAt: 0, idle: undefined as ReturnType<typeof setTimeout> | undefined });
  const { client } = state;
  const chatId = conversation.chatId;

  const stopTyping = () => {
    clearTimeout(typing.current.idle);
    if (typing.current.sentAt) void client.typing(chatId, false).catch(() => undefined);
    typing.current = { sentAt: 0, idle: undefined };
  };
  useEffect(() => stopTyping, [chatId]);
  useEffect(() => {
    if (draft.kind === 'edit') setText(draft.message.content);
    setError(undefined);
    input.current?.focus();
  }, [draft]);

  const onInput = (value: string) => {
    setText(value);
    if (draft.kind === 'edit') return;
    const now = Date.now();
    if (value && now - typing.current.sentAt > TYPING_REPEAT_MS) {
      typing.current.sentAt = now;
      void client.typing(chatId, true).catch(() => undefined);
    }
    clearTimeout(typing.current.idle);
    typing.current.idle = setTimeout(stopTyping, TYPING_IDLE_MS);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content) return;
    stopTyping();
    if (draft.kind === 'edit') {
      if (content !== draft.message.content && !(await conversation.act(draft.message.messageId, () => client.edit(chatId, draft.message.messageId, content)))) {
        setError('The edit was not saved; see the message.');
        return;
      }
    } else {
      // A picked member whose @name was taken out of the text again is not mentioned.
      const mentions = [...new Set([...picked].filter(([name]) => content.includes(`@${name}`)).map(([, userId]) => userId))];
      void conversation.send(state.me.userId, content, draft.kind === 'reply' ? draft.to : undefined, undefined, mentions);
    }
    setPicked(new Map());
    setText('');
    setDraft({ kind: 'new' });
  };
  const cancel = () => {
    setText('');
    setPicked(new Map());
    setDraft({ kind: 'new' });
  };

  // "@" and the start of a name at the end of the text: the members it may be, to pick one.
  const query = draft.kind === 'edit' ? undefined : /(?:^|\s)@([^\s@]{0,40})$/.exec(text)?.[1];
  const candidates =
    query === undefined
      ? []
      : conversation.members
          .filter((m) => m.userId !== state.me.userId && state.nameOf(m.userId).toLowerCase().startsWith(query.toLowerCase()))
          .slice(0, 6);
  const pick = (userId: string) => {
    const name = state.nameOf(userId);
    setText(text.replace(/@([^\s@]*)$/, `@${name} `));
    setPicked(new Map([...picked, [name, userId]]));
    input.current?.focus();
  };

  return html`<form class="composer" onSubmit=${submit}>
    ${draft.kind === 'reply'
      ? html`<div class="context small"><span>Replying to <b>${state.nameOf(draft.to.senderId)}</b>: ${preview(draft.to)}</span><button type="button" class="link" aria-label="Cancel reply" onClick=${cancel}>Cancel</button></div>`
      : null}
    ${draft.kind === 'edit' ? html`<div class="context small"><span>Editing your message</span><button type="button" class="link" onClick=${cancel}>Cancel</button></div>` : null}
    ${error ? html`<p class="error small" role="alert">${error}</p>` : null}
    ${candidates.length
      ? html`<ul class="mention-picker" role="listbox" aria-label="Mention a member">
          ${candidates.map((m) => html`<li><button type="button" role="option" class="mention-option" onClick=${() => pick(m.userId)}>@${state.nameOf(m.userId)}</button></li>`)}
        </ul>`
      : null}
    <div class="row">
      <input
        ref=${input}
        class="message-input"
        aria-label="Message"
        placeholder="Write a message"
        autocomplete="off"
        value=${text}
        onInput=${(e: Event) => onInput((e.target as HTMLInputElement).value)}
        onKeyDown=${(e: KeyboardEvent) => e.key === 'Escape' && cancel()}
      />
      ${draft.kind === 'edit'
        ? null
        : html`<${AttachButton} label="Attach a file" inputClass="file-input" onFile=${(file: File) => void conversation.sendFile(state.me.userId, file)} />`}
      <button type="submit">${draft.kind === 'edit' ? 'Save' : 'Send'}</button>
    </div>
  </form>`;
}
