import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { thumbHashToDataURL } from 'thumbhash';
import type { Attachment, AttachmentUrls } from '../../../sdk/client.ts';
import type { OpenConversation } from '../conversation-state.ts';

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
 * URLs are asked for when shown.
 */
export function Attachments({ conversation, attachments }: { conversation: OpenConversation; attachments: Attachment[] }) {
  return html`<div class="attachments">${attachments.map((a) => html`<${AttachmentItem} key=${a.id} conversation=${conversation} attachment=${a} />`)}</div>`;
}

function AttachmentItem({ conversation, attachment: a }: { conversation: OpenConversation; attachment: Attachment }) {
  const [urls, setUrls] = useState<AttachmentUrls | undefined>(undefined);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    conversation.attachmentUrls(a.id).then(
      (u) => live && setUrls(u),
      () => live && setFailed(true),
    );
    return () => void (live = false);
  }, [a.id]);
  if (a.thumbnail) {
    const placeholder = a.placeholder ? placeholderUrl(a.placeholder) : undefined;
    const style = `width:${a.thumbnail.width}px;height:${a.thumbnail.height}px;${placeholder ? `background-image:url(${placeholder});` : ''}`;
    return html`<a class="attachment image" href=${urls?.url} target="_blank" rel="noopener" aria-label=${`${a.name} (${fileSize(a.size)})`}>
      <span class="frame" style=${style}>${urls?.thumbnailUrl ? html`<img class="thumb" src=${urls.thumbnailUrl} alt=${a.name} width=${a.thumbnail.width} height=${a.thumbnail.height} />` : null}</span>
    </a>`;
  }
  return html`<a class="attachment file" href=${urls?.url} download=${a.name} aria-disabled=${!urls}>
    <span class="file-name">${a.name}</span> <span class="file-size muted small">${fileSize(a.size)}</span>
    ${failed ? html`<span class="error small"> (not available)</span>` : null}
  </a>`;
}
