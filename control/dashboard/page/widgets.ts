import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Small pieces the views share: copying, confirming, dates. */

/**
 * Puts text on the clipboard. The Clipboard API needs a secure context (HTTPS, or this machine's
 * own address); elsewhere the older copy command on a selected, off-screen text area still works.
 */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
}

/** A button that copies `text`, and says (to sight and to screen readers) whether it did. */
export function CopyButton({ text, what }: { text: string; what: string }) {
  const [said, setSaid] = useState('');
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = async () => {
    try {
      await copyText(text);
      setSaid('Copied');
    } catch {
      setSaid('Copy failed: select the text and copy it yourself');
    }
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setSaid(''), 4000);
  };
  return html`<span class="copy">
    <button type="button" class="secondary" onClick=${copy} aria-label=${`Copy ${what}`}>Copy</button>
    <span class="copy-said" role="status">${said}</span>
  </span>`;
}

interface ConfirmProps {
  title: string;
  children: unknown;
  confirmLabel: string;
  /** Whether the action destroys something (shown in red). */
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A modal confirmation on the native <dialog>: it keeps focus inside, Escape cancels, and focus
 * returns to the button that opened it when it closes. Mounted when open, unmounted to close.
 */
export function ConfirmDialog(props: ConfirmProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef(props.onCancel);
  cancel.current = props.onCancel;
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const element = dialog.current!;
    element.showModal();
    const onCancel = (event: Event) => {
      event.preventDefault();
      cancel.current();
    };
    element.addEventListener('cancel', onCancel);
    return () => {
      element.removeEventListener('cancel', onCancel);
      if (element.open) element.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return html`<dialog ref=${dialog} class="confirm" aria-labelledby="confirm-title" aria-describedby="confirm-body">
    <h2 id="confirm-title">${props.title}</h2>
    <div id="confirm-body">${props.children}</div>
    <div class="actions">
      <button type="button" class="secondary" onClick=${props.onCancel} autofocus>Cancel</button>
      <button type="button" class=${props.danger ? 'danger' : ''} onClick=${props.onConfirm} disabled=${props.busy}>${props.confirmLabel}</button>
    </div>
  </dialog>`;
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/**
 * A timestamp as the reader's locale writes it, in a <time> element carrying the exact value; to
 * the second where events a few seconds apart must be told apart (a log).
 */
export function When({ iso, none = '—', seconds = false }: { iso?: string | null | undefined; none?: string; seconds?: boolean }) {
  if (!iso) return html`<span>${none}</span>`;
  return html`<time datetime=${iso}>${(seconds ? dateTimeSeconds : dateTime).format(new Date(iso))}</time>`;
}

/** A short word for a state (ACTIVE, SUSPENDED, DEMO…), coloured by what it means. */
export function Badge({ text, tone = 'neutral' }: { text: string; tone?: 'good' | 'bad' | 'neutral' }) {
  return html`<span class=${`badge ${tone}`}>${text}</span>`;
}

/** A code block with a copy button for its text. */
export function Snippet({ code, what }: { code: string; what: string }) {
  return html`<div class="snippet">
    <pre tabindex="0" aria-label=${what}><code>${code}</code></pre>
    <${CopyButton} text=${code} what=${what} />
  </div>`;
}
