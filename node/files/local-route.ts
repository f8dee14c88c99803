import type { ReadStream } from 'node:fs';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { toClientError } from '../../common/errors/index.ts';
import { allowOrigin, type CorsPolicy } from '../../common/http/index.ts';
import { LOCAL_FILES_PATH, type LocalObjectStore, type LocalSignedResponse } from './local-store.ts';

/** Most request bytes held in memory while the disk catches up, per upload: past it the socket pauses. */
const HIGH_WATER_BYTES = 1 << 20;

/**
 * Serves the local object store's signed URLs on the node's uWS app (GET and PUT under
 * LOCAL_FILES_PATH), streaming both ways with the uWS rules: request data copied before any await,
 * an abort handler on every response, writes corked, the upload's socket paused while more than
 * HIGH_WATER_BYTES wait for the disk, the download written as the socket drains (tryEnd and
 * onWritable), never the whole file in memory. Registered before the JSON routes' catch-all.
 * Browsers of CORS_ORIGINS may PUT (the preflight is answered here) and read the answers.
 */
export function serveLocalFiles(app: TemplatedApp, store: LocalObjectStore, cors: CorsPolicy): void {
  app.options(`${LOCAL_FILES_PATH}*`, (res, req) => {
    const origin = allowOrigin(cors, req.getHeader('origin') || undefined);
    res.cork(() => {
      res.writeStatus('204 No Content').writeHeader('allow', 'GET, HEAD, PUT, OPTIONS');
      if (origin) {
        res.writeHeader('access-control-allow-origin', origin).writeHeader('access-control-allow-methods', 'GET, PUT').writeHeader('access-control-allow-headers', 'content-type').writeHeader('access-control-max-age', '600');
        if (origin !== '*') res.writeHeader('vary', 'Origin');
      }
      res.endWithoutBody();
    });
  });
  const handler = (res: HttpResponse, req: HttpRequest) => {
    const origin = allowOrigin(cors, req.getHeader('origin') || undefined);
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = new URLSearchParams(req.getQuery() ?? '');
    const contentLength = req.getHeader('content-length') || undefined;
    const contentType = req.getHeader('content-type') || undefined;
    let key: string;
    try {
      key = path.slice(LOCAL_FILES_PATH.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      key = '';
    }
    const state = { aborted: false };
    let body: BodyQueue | undefined;
    res.onAborted(() => {
      state.aborted = true;
      body?.fail(new Error('the client went away'));
    });
    if (method === 'PUT') body = new BodyQueue(res, contentLength === '0');
    store
      .handleSigned({ method, key, query, ...(contentLength ? { contentLength } : {}), ...(contentType ? { contentType } : {}), ...(body ? { body } : {}) })
      .then((answer) => respond(res, origin ? { ...answer, headers: { ...answer.headers, 'access-control-allow-origin': origin, ...(origin === '*' ? {} : { vary: 'Origin' }) } } : answer, state, method === 'HEAD', body?.unread))
      .catch((error: unknown) => {
        // Told as every route tells a failure (toClientError): never the exception's own message.
        const problem = toClientError(error).toProblem();
        respond(res, { status: problem.status, headers: { 'content-type': 'application/problem+json' }, problem }, state, false, body?.unread);
      });
  };
  app.get(`${LOCAL_FILES_PATH}*`, handler);
  app.put(`${LOCAL_FILES_PATH}*`, handler);
}

/**
 * Writes the answer. `unread`: a PUT refused before its whole body arrived; the connection then
 * closes with the answer (announced), so no client sends its next request after bytes the node
 * did not read.
 */
function respond(res: HttpResponse, answer: LocalSignedResponse, state: { aborted: boolean }, head: boolean, unread = false): void {
  if (state.aborted) {
    answer.file?.destroy();
    return;
  }
  // An empty file has no chunk to write: the response ends here.
  const empty = answer.headers['content-length'] === '0';
  res.cork(() => {
    res.writeStatus(`${answer.status}`);
    for (const [k, v] of Object.entries(answer.headers)) if (k !== 'content-length') res.writeHeader(k, v);
    if (!answer.file || head || empty) {
      answer.file?.destroy();
      // uWS announces the close itself (Connection: close) when asked to close.
      res.end(answer.problem ? JSON.stringify(answer.problem) : undefined, unread);
    }
  });
  if (answer.file && !head && !empty) streamFile(res, answer.file, Number(answer.headers['content-length']), state);
}

/** Writes a file to the response as the socket takes it: tryEnd with the total size, onWritable to go on. */
function streamFile(res: HttpResponse, file: ReadStream, total: number, state: { aborted: boolean }): void {
  let pending: { chunk: ArrayBuffer; offset: number } | undefined;
  file.on('data', (data) => {
    if (state.aborted) return void file.destroy();
    const buffer = data as Buffer;
    const chunk = buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer;
    const offset = res.getWriteOffset();
    let ok = false;
    let done = false;
    res.cork(() => {
      [ok, done] = res.tryEnd(chunk, total);
    });
    if (done) return void file.destroy();
    if (ok) return;
    // The socket is full: wait for it to drain, then write what it did not take.
    file.pause();
    pending = { chunk, offset };
    res.onWritable((writeOffset) => {
      const p = pending!;
      let wrote = false;
      let ended = false;
      [wrote, ended] = res.tryEnd(p.chunk.slice(writeOffset - p.offset), total);
      if (ended) file.destroy();
      else if (wrote) {
        pending = undefined;
        file.resume();
      }
      return wrote;
    });
  });
  file.on('error', () => {
    if (!state.aborted) res.close();
  });
}

/**
 * A request body as an async iterable of copied chunks. The socket is paused while more than
 * HIGH_WATER_BYTES wait to be taken, and resumed as they are.
 */
class BodyQueue implements AsyncIterable<Uint8Array> {
  private chunks: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private failure: Error | undefined;
  private paused = false;
  private wake: (() => void) | undefined;

  /** Whether bytes of the body are still to come (the handler answered without reading it all). */
  get unread(): boolean {
    return !this.ended;
  }

  constructor(
    private readonly res: HttpResponse,
    empty: boolean,
  ) {
    // uWS calls onData for no request without a body.
    this.ended = empty;
    res.onData((chunk, isLast) => {
      const copy = Buffer.from(new Uint8Array(chunk).slice());
      this.chunks.push(copy);
      this.queued += copy.length;
      if (isLast) this.ended = true;
      else if (this.queued > HIGH_WATER_BYTES && !this.paused) {
        this.paused = true;
        res.pause();
      }
      this.notify();
    });
  }

  fail(error: Error): void {
    this.failure = error;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    for (;;) {
      if (this.failure) throw this.failure;
      const chunk = this.chunks.shift();
      if (chunk) {
        this.queued -= chunk.length;
        if (this.paused && this.queued <= HIGH_WATER_BYTES / 2 && !this.failure) {
          this.paused = false;
          this.res.resume();
        }
        yield chunk;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
