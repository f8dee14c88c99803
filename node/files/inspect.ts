import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Metadata, type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';

/** Images the node reads to strip their metadata and make a thumbnail and a placeholder. */
const PROCESSED_IMAGES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif']);
/** Longest side of a thumbnail, in pixels. */
export const THUMBNAIL_MAX_SIDE = 320;
/** Largest image decoded (width × height, every frame): a bigger one is refused, as it cannot be stripped. */
const MAX_DECODED_PIXELS = 50_000_000;

/**
 * An image of a type the node processes whose metadata it cannot strip: its bytes do not decode
 * (truncated, corrupt) or it has more pixels than MAX_DECODED_PIXELS. Never kept as it came, since
 * its EXIF (GPS position included) would be served with it.
 */
export interface UnreadableImage {
  type: string;
  unreadable: string;
}

export interface InspectedFile {
  /** The type the bytes are, sniffed from them: never the uploader's claim. */
  type: string;
  /** The bytes to keep: an image's without its metadata (EXIF, GPS, XMP), else as uploaded. */
  bytes: Uint8Array;
  image?: {
    width: number;
    height: number;
    /** A ThumbHash of the image, base64: clients draw it while the thumbnail loads. */
    placeholder: string;
    thumbnail: { bytes: Uint8Array; width: number; height: number; type: 'image/webp' };
  };
}

/**
 * What a file really is, from its bytes alone (`file-type`'s magic numbers, plus SVG, which has
 * none), and for an image the copy to keep and its thumbnail. Text and unknown formats are
 * `application/octet-stream` unless they are SVG or HTML, which a browser would run. All decoding
 * runs in sharp's threads, not on the event loop; file-type reads a bounded head of the bytes.
 */
export async function inspectFile(bytes: Uint8Array): Promise<InspectedFile | UnreadableImage> {
  const sniffed = await fileTypeFromBuffer(bytes);
  // XML may be SVG, which file-type does not tell apart: XML and unknown bytes get the text check.
  const type = sniffed && sniffed.mime !== 'application/xml' ? sniffed.mime : textType(bytes, sniffed?.mime ?? 'application/octet-stream');
  if (!PROCESSED_IMAGES.has(type)) return { type, bytes };
  let meta: Metadata;
  try {
    // The header only: nothing is decoded yet, so an image of any size is measured here.
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    return { type, unreadable: 'its bytes do not decode as an image (truncated or corrupt)' };
  }
  // An animated WebP is decoded whole, every frame (GIFs only their first, for the thumbnail).
  const frames = type === 'image/webp' ? (meta.pages ?? 1) : 1;
  const pixels = (meta.width ?? 0) * (meta.pageHeight ?? meta.height ?? 0) * frames;
  if (pixels > MAX_DECODED_PIXELS) return { type, unreadable: `it has ${pixels} pixels (${meta.width}×${meta.pageHeight ?? meta.height}${frames > 1 ? `, ${frames} frames` : ''}), more than the ${MAX_DECODED_PIXELS} an image may have` };
  try {
    // Re-encoding drops every metadata block (sharp keeps none unless asked); rotate() first applies
    // the EXIF orientation the stripped copy would otherwise lose. GIFs carry no EXIF: kept as sent.
    const kept = type === 'image/gif' ? bytes : await reencode(sharp(bytes, { limitInputPixels: MAX_DECODED_PIXELS, animated: type === 'image/webp' }).rotate(), type);
    const upright = sharp(bytes, { limitInputPixels: MAX_DECODED_PIXELS }).rotate();
    const { data: thumb, info } = await upright.clone().resize(THUMBNAIL_MAX_SIDE, THUMBNAIL_MAX_SIDE, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 75 }).toBuffer({ resolveWithObject: true });
    const small = await upright.clone().resize(100, 100, { fit: 'inside' }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    const placeholder = Buffer.from(rgbaToThumbHash(small.info.width, small.info.height, small.data)).toString('base64');
    // The upright size: EXIF orientations 5-8 turn the stored image a quarter; an animation's
    // frames are stacked in its height (pageHeight is one frame's).
    const frameHeight = meta.pageHeight ?? meta.height;
    const swapped = (meta.orientation ?? 1) >= 5;
    const width = (swapped ? frameHeight : meta.width) ?? info.width;
    const height = (swapped ? meta.width : frameHeight) ?? info.height;
    return { type, bytes: kept, image: { width, height, placeholder, thumbnail: { bytes: thumb, width: info.width, height: info.height, type: 'image/webp' } } };
  } catch {
    // A header that reads but a body that does not (truncated, corrupt): sharp fails on its
    // decoder's first warning, so nothing half-read is kept.
    return { type, unreadable: 'its bytes do not decode as an image (truncated or corrupt)' };
  }
}

async function reencode(image: Sharp, type: string): Promise<Uint8Array> {
  switch (type) {
    case 'image/jpeg':
      return image.jpeg({ quality: 90, mozjpeg: true }).toBuffer();
    case 'image/png':
      return image.png().toBuffer();
    case 'image/webp':
      return image.webp({ quality: 90 }).toBuffer();
    default:
      return image.avif({ quality: 70 }).toBuffer();
  }
}

/** How much of the start of bytes with no magic number is looked through for markup. */
const TEXT_HEAD_BYTES = 4096;
/** Tags after which a browser, or a sniffing viewer, would treat the bytes as SVG or HTML. */
const MARKUP: readonly (readonly [string, string])[] = [
  ['svg', 'image/svg+xml'],
  ['html', 'text/html'],
  ['head', 'text/html'],
  ['body', 'text/html'],
  ['script', 'text/html'],
];

/**
 * Bytes with no magic number (or XML): a script by its `#!` line, SVG or HTML by a tag of theirs,
 * their doctype or their namespace anywhere in the head (after comments, a prolog, other text),
 * case-insensitive; anything else is opaque bytes. A text that only quotes such a tag is refused
 * too: a browser sniffing it would not tell the difference either. One pass over at most TEXT_HEAD_BYTES: each `<` is looked at once.
 */
function textType(bytes: Uint8Array, otherwise: string): string {
  // Byte by byte (latin1), NULs dropped: the ASCII markers read alike in UTF-8, Latin-1 and UTF-16.
  const head = Buffer.from(bytes.subarray(0, TEXT_HEAD_BYTES)).toString('latin1').replaceAll('\0', '').toLowerCase();
  // A UTF-8 byte order mark, as latin1, before the `#!` line.
  if (head.replace(/^\u00ef\u00bb\u00bf/, '').startsWith('#!')) return 'application/x-sh';
  // Elements in the SVG or XHTML namespace under any prefix (`<x:svg xmlns:x="…/2000/svg">`).
  if (head.includes('http://www.w3.org/2000/svg')) return 'image/svg+xml';
  if (head.includes('http://www.w3.org/1999/xhtml')) return 'application/xhtml+xml';
  for (let at = head.indexOf('<'); at !== -1; at = head.indexOf('<', at + 1)) {
    const found = head.startsWith('!doctype', at + 1) ? doctypeAt(head, at + 9) : tagAt(head, at + 1);
    if (found) return found;
  }
  return otherwise;
}

/** The markup type whose tag name starts at `at` (followed by a blank, `>`, `/` or the head's end). */
function tagAt(head: string, at: number): string | undefined {
  for (const [tag, type] of MARKUP) if (head.startsWith(tag, at) && endsName(head, at + tag.length)) return type;
  return undefined;
}

/** `<!doctype svg …>` or `<!doctype html …>`: the name after the blanks at `at`. */
function doctypeAt(head: string, at: number): string | undefined {
  let i = at;
  while (i < head.length && /\s/.test(head[i]!)) i++;
  if (i === at) return undefined;
  if (head.startsWith('svg', i) && endsName(head, i + 3)) return 'image/svg+xml';
  if (head.startsWith('html', i) && endsName(head, i + 4)) return 'text/html';
  return undefined;
}

function endsName(head: string, at: number): boolean {
  return at >= head.length || /[\s>/]/.test(head[at]!);
}
