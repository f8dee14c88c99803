import { ChatApiError, ChatNetworkError } from './errors.ts';

interface SignedPut {
  url: string;
  headers: Record<string, string>;
}

/** Where an upload's bytes go, as the service answers (asking for an upload, or its state). */
export interface UploadTarget {
  upload?: SignedPut & { expiresAt: string };
  parts?: { number: number; offset: number; size: number; received: boolean; upload?: SignedPut & { expiresAt: string } }[];
}

/** Files larger than this go in parts (the service's part size), each PUT on its own, so an interruption costs one part. */
export const MULTIPART_FROM_BYTES = 8 * 1024 * 1024;
/** A URL that expires sooner than this is signed again before its PUT starts. */
const FRESH_FOR_MS = 60_000;

/**
 * Puts what the service does not have yet of an upload: the whole file to its one URL, or each
 * part not received to its own, in order, each retried on its own (withRetries). A part whose URL
 * is about to expire (a long upload) gets a new one from `refresh` (the upload's state) first.
 * `onProgress` counts the bytes of the whole file, those received before included.
 */
export async function putMissing(target: UploadTarget, blob: Blob, onProgress: ((sent: number, total: number) => void) | undefined, fetchImpl: typeof fetch, refresh: () => Promise<UploadTarget>): Promise<void> {
  const total = blob.size;
  if (target.upload) {
    const put = target.upload;
    await withRetries(() => putBytes(put, blob, onProgress, fetchImpl));
    return;
  }
  const parts = target.parts ?? [];
  let done = parts.filter((p) => p.received).reduce((n, p) => n + p.size, parts.length === 0 ? total : 0);
  onProgress?.(done, total);
  for (const part of parts) {
    if (part.received) continue;
    let put = part.upload;
    if (!put || Date.parse(put.expiresAt) - Date.now() < FRESH_FOR_MS) {
      const now = (await withRetries(refresh)).parts?.find((p) => p.number === part.number);
      put = now?.received ? undefined : now?.upload;
    }
    if (put) {
      const request = put;
      const from = done;
      await withRetries(() => putBytes(request, blob.slice(part.offset, part.offset + part.size), (sent) => onProgress?.(from + sent, total), fetchImpl));
    }
    done += part.size;
  }
}

/** Headers the runtime sets itself (and a browser refuses from a script): the signed values are what it sends anyway. */
const SET_BY_RUNTIME = new Set(['content-length', 'host']);
const withoutSetByRuntime = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !SET_BY_RUNTIME.has(k.toLowerCase())));

/** How much of a file a streamed PUT hands to fetch at once (and how often it reports progress). */
export const STREAM_CHUNK_BYTES = 64 * 1024;

/** Whether this runs on Node, whose fetch takes a streamed body with the Content-Length given. */
const onNode = () => typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === 'string';

/**
 * PUTs a file to a signed URL. In a browser through XMLHttpRequest, whose upload progress events
 * fetch lacks. In Node through fetch with the body streamed in STREAM_CHUNK_BYTES chunks, each
 * reported as fetch takes it (so progress moves as the bytes go, a chunk and the socket's buffer
 * ahead of the wire at most), with the signed Content-Length (a stream's length is not known to
 * fetch, which would otherwise send it chunked, which a signed URL refuses). Elsewhere through fetch
 * with the whole Blob, progress reported at the start and the end. A retried PUT reports from its
 * start again. A refusal (4xx/5xx) becomes a ChatApiError (the node's problem when it has one), a
 * failure to connect a ChatNetworkError.
 */
export async function putBytes(put: SignedPut, blob: Blob, onProgress: ((sent: number, total: number) => void) | undefined, fetchImpl: typeof fetch): Promise<void> {
  const total = blob.size;
  if (typeof XMLHttpRequest !== 'undefined') {
    await new Promise<void>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('PUT', put.url);
      for (const [k, v] of Object.entries(withoutSetByRuntime(put.headers))) xhr.setRequestHeader(k, v);
      xhr.upload.onprogress = (e) => onProgress?.(e.loaded, total);
      xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(refusal(xhr.status, xhr.responseText)));
      xhr.onerror = () => reject(new ChatNetworkError(`cannot upload to ${new URL(put.url).origin}`));
      xhr.send(blob);
    });
    onProgress?.(total, total);
    return;
  }
  onProgress?.(0, total);
  let res: Response;
  try {
    // With a Blob, Content-Length is the body's own size, which fetch sets (Node's fetch joins a
    // given one to its own, "3, 3", which some dispatchers refuse); with a stream it is given.
    const init: RequestInit & { duplex?: 'half' } = onNode()
      ? { method: 'PUT', headers: { ...withoutSetByRuntime(put.headers), 'content-length': String(total) }, body: counted(blob, onProgress), duplex: 'half' }
      : { method: 'PUT', headers: withoutSetByRuntime(put.headers), body: blob };
    res = await fetchImpl(put.url, init);
  } catch (cause) {
    throw new ChatNetworkError(`cannot upload to ${new URL(put.url).origin}`, { cause });
  }
  const text = await res.text();
  if (!res.ok) throw refusal(res.status, text);
  onProgress?.(total, total);
}

/** `blob` as a stream read a chunk at a time, as its reader asks (no read ahead), each reported once handed over. */
function counted(blob: Blob, onProgress: ((sent: number, total: number) => void) | undefined): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (sent >= blob.size) return controller.close();
        const chunk = new Uint8Array(await blob.slice(sent, sent + STREAM_CHUNK_BYTES).arrayBuffer());
        sent += chunk.length;
        controller.enqueue(chunk);
        onProgress?.(sent, blob.size);
      },
    },
    { highWaterMark: 0 },
  );
}

function refusal(status: number, text: string): ChatApiError {
  try {
    const problem = JSON.parse(text) as { code?: unknown };
    if (typeof problem.code === 'string') return new ChatApiError(problem as ConstructorParameters<typeof ChatApiError>[0]);
  } catch {
    /* an S3 service answers XML */
  }
  return new ChatApiError({ type: 'about:blank', title: 'Upload refused', status, detail: text.slice(0, 300), code: status >= 500 ? 'UNAVAILABLE' : 'VALIDATION_FAILED' });
}

/** Attempts of each step of an upload when the service or the store is unavailable for a while. */
export const UPLOAD_ATTEMPTS = 5;

/** A retryable refusal (`UNAVAILABLE`: the object store is down) or a network failure. */
const transient = (error: unknown) => error instanceof ChatNetworkError || (error instanceof ChatApiError && error.retryable);

/**
 * Runs `step` again after an error `retryable` accepts (by default a retryable refusal or a
 * network failure), waiting the service's Retry-After, else 0.5 s doubling, UPLOAD_ATTEMPTS in
 * all (about 8 s). Every step of an upload may be repeated: asking again makes another upload, a
 * PUT writes the same bytes, a finalize is idempotent; so may a send with its idempotency key.
 */
export async function withRetries<T>(step: () => Promise<T>, retryable: (error: unknown) => boolean = transient, sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (!retryable(error) || attempt >= UPLOAD_ATTEMPTS) throw error;
      await sleep((error instanceof ChatApiError ? error.retryAfterMs : undefined) ?? 500 * 2 ** (attempt - 1));
    }
  }
}
