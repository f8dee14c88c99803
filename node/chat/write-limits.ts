import { ApiError, WindowLimiter } from '../../common/index.ts';
import type { Principal } from './local-ops.ts';

/**
 * The per-user rates of a chat user's writes other than sends (sends have their own rate and the
 * node's load shedding: see admitSend in node/service.ts). Counted on the node the user is
 * connected to, for REST and WebSocket together, before any work is done; beyond the rate the
 * write is refused with RATE_LIMITED and a retry hint. README, Limits, lists the table.
 */
export type WriteKind = 'write' | 'typing';

/** Which budget each chat operation a user starts draws on. */
export const WRITE_POLICY = Object.freeze({
  edit: 'write',
  deleteMessage: 'write',
  react: 'write',
  markRead: 'write',
  rename: 'write',
  remove: 'write',
  addMembers: 'write',
  removeMember: 'write',
  setRole: 'write',
  createDirect: 'write',
  createGroup: 'write',
  moderate: 'write',
  flag: 'write',
  pin: 'write',
  // Up to 100 presence lookups each: bounded per user like the writes.
  presence: 'write',
  typing: 'typing',
} as const satisfies Record<string, WriteKind>);

export type LimitedOperation = keyof typeof WRITE_POLICY;

/**
 * The per-application budget of chat actions on this node (APP_ACTIONS_PER_SECOND): every send,
 * write and typing indicator of any of an application's users counts, so one tenant's load is
 * bounded before it reaches the queues every tenant shares (the store's writer, the event loop).
 * A token bucket holding a tenth of a second's budget (at least 20 actions, or the whole budget
 * when smaller), refilled continuously: what a flooding tenant gets taken is spread over the
 * second, not let through in one burst as each second starts (a burst of its work would queue
 * ahead of every other tenant's).
 */
export class AppActionBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly burst: number;
  private nextSweep = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.burst = Math.max(Math.ceil(perSecond / 10), Math.min(perSecond, 20));
  }

  /** The bucket of `appId` brought up to now (not stored while full: a full bucket is no bucket). */
  private tokens(appId: string, t: number): number {
    const b = this.buckets.get(appId);
    return b ? Math.min(this.burst, b.tokens + ((t - b.at) * this.perSecond) / 1000) : this.burst;
  }

  private refusal(tokens: number): ApiError {
    const retryAfterSeconds = Math.max(0.001, ((1 - tokens) * 1000) / this.perSecond / 1000);
    return new ApiError('RATE_LIMITED', `this application's users make at most ${this.perSecond} chat actions per second on this node`, { retryAfterSeconds });
  }

  /** RATE_LIMITED when the application's budget is spent now, without counting. */
  spent(appId: string): ApiError | undefined {
    const tokens = this.tokens(appId, this.now());
    return tokens >= 1 ? undefined : this.refusal(tokens);
  }

  /** Counts one action of the application; RATE_LIMITED when over its budget. */
  admit(appId: string): ApiError | undefined {
    const t = this.now();
    if (t >= this.nextSweep) this.sweep(t);
    const tokens = this.tokens(appId, t);
    if (tokens < 1) return this.refusal(tokens);
    this.buckets.set(appId, { tokens: tokens - 1, at: t });
    return undefined;
  }

  /** Forgets buckets that have refilled: memory stays proportional to the applications active in the last second or so. */
  private sweep(t: number): void {
    this.nextSweep = t + 1000;
    for (const [appId, b] of this.buckets) if (b.tokens + ((t - b.at) * this.perSecond) / 1000 >= this.burst) this.buckets.delete(appId);
  }
}

export class UserWriteLimits {
  private readonly limiters: Record<WriteKind, WindowLimiter>;

  constructor(
    private readonly perSecond: Record<WriteKind, number>,
    private readonly app?: AppActionBudget,
  ) {
    this.limiters = { write: new WindowLimiter(perSecond.write, 1000), typing: new WindowLimiter(perSecond.typing, 1000) };
  }

  /** Counts one `operation` of the user (and of its application); RATE_LIMITED when over a budget. */
  admit(operation: LimitedOperation, p: Principal): ApiError | undefined {
    const refused = this.app?.admit(p.appId);
    if (refused) return refused;
    const kind = WRITE_POLICY[operation];
    const d = this.limiters[kind].hit(`${p.appId}/${p.userId}`);
    if (d.allowed) return undefined;
    const what = kind === 'typing' ? 'typing indicators' : 'edits, deletes, reactions, read marks, chat changes and presence queries';
    return new ApiError('RATE_LIMITED', `at most ${this.perSecond[kind]} ${what} per second per user`, { retryAfterSeconds: d.retryAfterSeconds });
  }
}
