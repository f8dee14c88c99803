import { fileTypeFromBuffer } from 'file-type';
import sharp, { type Sharp } from 'sharp';
import { rgbaToThumbHash } from 'thumbhash';

/** Images the node reads to strip their metadata and make a thumbnail and a placeholder. */
const PROCESSED_IMAGES = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif']);
/** Longest side of a thumbnail, in pixels. */
export const THUMBNAIL_MAX_SIDE = 320;
/** Largest image decoded (width × height): a bigger one is stored as a plain file, unread. */
const MAX_DECODED_PIXELS = 50_000_000;

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
export async function inspectFile(bytes: Uint8Array): Promise<InspectedFile> {
  const sniffed = await fileTypeFromBuffer(bytes);
  // XML may be SVG, which file-type does not tell apart: XML and unknown bytes get the text check.
  const type = sniffed && sniffed.mime !== 'application/xml' ? sniffed.mime : textType(bytes, sniffed?.mime ?? 'application/octet-stream');
  if (!PROCESSED_IMAGES.has(type)) return { type, bytes };
  try {
    const meta = await sharp(bytes, { limitInputPixels: MAX_DECODED_PIXELS }).metadata();
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
    // Bytes that start like an image but do not decode (truncated, or past the pixel limit): kept
    // as a plain file of that type, with no thumbnail.
    return { type, bytes };
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

/** SVG and HTML by their first non-blank characters (a bounded head); anything else is opaque bytes. */
function textType(bytes: Uint8Array, otherwise: string): string {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('utf8').trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'image/svg+xml';
  if (head.startsWith('<!doctype html') || head.startsWith('<html')) return 'text/html';
  return otherwise;
}
