import { randomUUID } from 'node:crypto';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Compile } from 'typebox/compile';
import { RecentMap } from '../../common/cache/index.ts';
import { ApiError, BackendUnavailableError, type Logger } from '../../common/index.ts';
import { BEFORE_SEND_EVENT, BeforeSendAnswer, deliver, webhookUrlProblem, type BeforeSendPolicy } from '../../common/webhooks/index.ts';
import { Content, type BeforeSendHook, type BeforeSendPort, type Principal, type SendInput } from '../chat/index.ts';
import type { StoredAttachment } from '../store/index.ts';

/** Where hooks are read: the control store's BeforeSendStore. */
export interface BeforeSendSource {
  get(appId: string): Promise<BeforeSendHook | undefined>;
}

export interface BeforeSendOptions {
  source: BeforeSendSource;
  /** How long a read hook (or its absence) is used without reading it again. */
  ttlMs: number;
  /** WEBHOOK_ALLOW_INSECURE_URLS: http:// and addresses inside allowed (development and tests). */
  allowInsecure: boolean;
  log: Logger;
  now?: () => Date;
}

interface Entry {
  /** When the value was read (or its read started). */
  at: number;
  /** The read under way, while there is one. */
  loading?: Promise<BeforeSendHook | undefined>;
  /** The last value read, once one was: what the hot path uses without waiting. */
  known?: { hook: BeforeSendHook | undefined };
}

const checkAnswer = Compile(BeforeSendAnswer);
const checkContent = Compile(Content);
/** Applications whose hook state a node remembers (the oldest is forgotten past this). */
const MAX_CACHED = 10_000;
/** A failing hook is logged at most this often per application (each send would otherwise log). */
const LOG_EVERY_MS = 60_000;

/**
 * The before-send hooks of a node (README, "Before-send hook"). Each application's hook is cached:
 * read from the control store at most once per `ttlMs` per application, dropped at once when the
 * control service says it changed (in-process, or on the cluster bus); past the TTL the cached
 * value keeps serving while one read refreshes it, and a failed read keeps the last value (with
 * none known, the send fails UNAVAILABLE). An application without a hook costs a map lookup.
 *
 * `ask` makes the call: a signed POST (Standard Webhooks, a fresh `webhook-id` per call) bounded by
 * the hook's timeout, over keep-alive connections, with the URL checked again and every resolved
 * address checked at connection time, as for webhook deliveries. It runs before the chat's actor
 * sees the send, so a slow hook delays only its own send.
 */
export class BeforeSendHooks implements BeforeSendPort {
  private readonly cache = new RecentMap<string, Entry>(MAX_CACHED);
  private readonly now: () => Date;
  private readonly agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 32, timeout: 30_000 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 32, timeout: 30_000 }) };
  private readonly loggedAt = new RecentMap<string, { at: number; suppressed: number }>(MAX_CACHED);

  constructor(private readonly options: BeforeSendOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** The application's hook: synchronously when cached (`undefined`: none), else a promise. */
  hookOf(appId: string): BeforeSendHook | undefined | Promise<BeforeSendHook | undefined> {
    const now = Date.now();
    const entry = this.cache.get(appId);
    if (entry?.known && (now - entry.at < this.options.ttlMs || entry.loading)) return entry.known.hook;
    if (entry?.loading) return entry.loading;
    const e: Entry = entry ?? { at: now };
    e.at = now;
    const loading = this.options.source.get(appId).then(
      (hook) => {
        e.loading = undefined;
        e.known = { hook };
        return hook;
      },
      (error: unknown) => {
        e.loading = undefined;
        if (e.known) return e.known.hook;
        if (this.cache.get(appId) === e) this.cache.delete(appId);
        throw new BackendUnavailableError('control store (before-send hook)', { cause: error });
      },
    );
    e.loading = loading;
    if (!entry) {
      this.cache.set(appId, e);
    }
    return e.known ? e.known.hook : loading;
  }

  invalidate(appId: string): void {
    this.cache.delete(appId);
  }

  /**
   * Asks `hook` about a message `p` sends to `chatId`: resolves with what to store (the input, or
   * the input with the hook's replacement content), or the error the sender gets (MESSAGE_REJECTED;
   * BEFORE_SEND_FAILED when the hook fails and the policy is `closed`). Never throws.
   */
  async ask(hook: BeforeSendHook, p: Principal, chatId: string, input: SendInput, files?: readonly StoredAttachment[]): Promise<SendInput | ApiError> {
    const { appId } = p;
    const id = randomUUID();
    const at = this.now();
    const data = {
      chatId,
      senderId: p.userId,
      content: input.content,
      ...(input.replyTo !== undefined ? { replyTo: input.replyTo } : {}),
      ...(input.clientKey !== undefined ? { clientKey: input.clientKey } : {}),
      // The files' metadata (as the message will carry it), for the hook to judge them: never the bytes.
      ...(files ? { attachments: files } : input.attachments !== undefined ? { attachments: input.attachments.map((id) => ({ id })) } : {}),
      ...(input.data !== undefined ? { data: input.data } : {}),
      ...(input.system ? { type: 'system' } : {}),
      ...(input.mentions !== undefined ? { mentions: input.mentions } : {}),
      ...(input.parentId !== undefined ? { parentId: input.parentId } : {}),
      ...(input.showInChat ? { showInChat: true } : {}),
    };
    const body = JSON.stringify({ type: BEFORE_SEND_EVENT, id, timestamp: at.toISOString(), appId, data });
    const refused = webhookUrlProblem(hook.url, this.options.allowInsecure);
    const result = refused
      ? { ok: false as const, error: `url ${refused}`, body: undefined }
      : await deliver({
          url: hook.url,
          secret: hook.secret,
          id,
          body,
          timeoutMs: hook.timeoutMs,
          allowInsecure: this.options.allowInsecure,
          now: () => at,
          agent: hook.url.startsWith('https:') ? this.agents.https : this.agents.http,
          readBody: true,
        });
    const verdict = result.ok ? verdictOf(result.body ?? '') : result.error ?? 'failed';
    if (typeof verdict === 'string') return this.failed(hook, appId, verdict, input);
    switch (verdict.action) {
      case 'allow':
        return input;
      case 'reject': {
        const reason = verdict.reason ?? 'the message was rejected';
        return new ApiError('MESSAGE_REJECTED', reason, { errors: [{ path: '/body/content', message: reason }] });
      }
      case 'replace':
        return { ...input, content: verdict.content };
    }
  }

  /** Closes the kept connections. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private failed(hook: BeforeSendHook, appId: string, why: string, input: SendInput): SendInput | ApiError {
    this.logFailure(appId, why, hook.failurePolicy);
    if (hook.failurePolicy === 'open') return input;
    return new ApiError('BEFORE_SEND_FAILED', "the application's before-send hook did not answer usably; the message was not sent");
  }

  private logFailure(appId: string, why: string, policy: BeforeSendPolicy): void {
    const now = Date.now();
    const last = this.loggedAt.get(appId);
    if (last && now - last.at < LOG_EVERY_MS) {
      last.suppressed++;
      return;
    }
    this.options.log.warn({ appId, err: why, policy, ...(last?.suppressed ? { alsoFailedSinceLastLog: last.suppressed } : {}) }, 'before-send hook failed');
    this.loggedAt.set(appId, { at: now, suppressed: 0 });
  }
}

/** The hook's verdict, or why its answer is not one (then the policy decides). */
function verdictOf(text: string): BeforeSendAnswer | string {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return 'the answer is not JSON';
  }
  if (!checkAnswer.Check(answer)) return 'the answer is not an allow, reject or replace verdict';
  if (answer.action === 'replace' && !checkContent.Check(answer.content)) return "the replacement content breaks the rules of a message's content";
  return answer;
}
