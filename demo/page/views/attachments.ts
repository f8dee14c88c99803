import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { thumbHashToDataURL } from 'thumbhash';
import type { Attachment, AttachmentUrls } from '../../../sdk/client.ts';
import { URLS_REUSE_MS, type OpenConversation } from '../conversation-state.ts';

/** The 📎 button: picks one file and hands it over (the picker is cleared, so the same file can be picked again). */
export function AttachButton({ label, inputClass, onFile }: { label: string; inputClass: string; onFile: (file: File) => void }) {
  return html`<label class="attach" title=${label}>📎<input
      type="file"
      class=${inputClass}
      aria-label=${label}
      onChange=${(e: Event) => {
        const picker = e.target as HTMLInputElement;
        const file = picker.files?.[0];
        picker.value = '';
        if (file) onFile(file);
      }}
  /></label>`;
}

/** 1.2 MB, 340 KB, 12 bytes. */
export function fileSize(bytes: number): string {
  if (bytes >= 1_000_000) return `${(bytes / 1_000_000).toFixed(1)} MB`;
  if (bytes >= 1_000) return `${Math.round(bytes / 1_000)} KB`;
  return `${bytes} bytes`;
}

/** The ThumbHash placeholder as an image URL, drawn while the thumbnail loads. */
function placeholderUrl(hash: string): string | undefined {
  try {
    return thumbHashToDataURL(Uint8Array.from(atob(hash), (c) => c.charCodeAt(0)));
  } catch {
    return undefined;
  }
}

/**
 * A message's files: an image as its placeholder, then its thumbnail (a link to the full image),
 * at the size the thumbnail has; any other file as a link with its name and size. Their signed
 * URLs are asked for when shown, and again when a link is pointed at or followed once they are
 * older than URLS_REUSE_MS (they expire after 5 minutes): a page left open keeps working links.
 */
export function Attachments({ conversation, attachments }: { conversation: OpenConversation; attachments: Attachment[] }) {
  return html`<div class="attachments">${attachments.map((a) => html`<${AttachmentItem} key=${a.id} conversation=${conversation} attachment=${a} />`)}</div>`;
}

function AttachmentItem({ conversation, attachment: a }: { conversation: OpenConversation; attachment: Attachment }) {
  const [urls, setUrls] = useState<AttachmentUrls | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  const state = useRef({ live: true, at: 0 });
  /** Fresh URLs (from the conversation's copy while it is young), shown once they come. */
  const load = () =>
    conversation.attachmentUrls(a.id).then(
      (u) => {
        state.current.at = Date.now();
        if (state.current.live) {
          setUrls(u);
          setFailed(false);
        }
        return u;
      },
      () => void (state.current.live && setFailed(true)),
    );
  const stale = () => Date.now() - state.current.at >= URLS_REUSE_MS;
  useEffect(() => {
    state.current.live = true;
    void load();
    return () => void (state.current.live = false);
  }, [a.id]);
  /** A link followed with URLs past their time: held back, followed again once fresh ones are in its href. */
  const follow = (e: MouseEvent) => {
    if (!stale()) return;
    e.preventDefault();
    const link = e.currentTarget as HTMLAnchorElement;
    void load().then((u) => {
      if (!u) return;
      link.href = u.url;
      link.click();
    });
  };
  const refresh = () => void (stale() && load());
  if (a.thumbnail) {
    const placeholder = a.placeholder ? placeholderUrl(a.placeholder) : undefined;
    const style = `width:${a.thumbnail.width}px;height:${a.thumbnail.height}px;${placeholder ? `background-image:url(${placeholder});` : ''}`;
    return html`<a class="attachment image" href=${urls?.url} target="_blank" rel="noopener" aria-label=${`${a.name} (${fileSize(a.size)})`} onClick=${follow} onPointerEnter=${refresh} onFocus=${refresh}>
      <span class="frame" style=${style}>${urls?.thumbnailUrl ? html`<img class="thumb" src=${urls.thumbnailUrl} alt=${a.name} width=${a.thumbnail.width} height=${a.thumbnail.height} />` : null}</span>
    </a>`;
  }
  return html`<a class="attachment file" href=${urls?.url} download=${a.name} aria-disabled=${!urls} onClick=${follow} onPointerEnter=${refresh} onFocus=${refresh}>
    <span class="file-name">${a.name}</span> <span class="file-size muted small">${fileSize(a.size)}</span>
    ${failed ? html`<span class="error small"> (not available)</span>` : null}
  </a>`;
}
