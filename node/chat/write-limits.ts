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
  typing: 'typing',
} as const satisfies Record<string, WriteKind>);

export type LimitedOperation = keyof typeof WRITE_POLICY;

export class UserWriteLimits {
  private readonly limiters: Record<WriteKind, WindowLimiter>;

  constructor(private readonly perSecond: Record<WriteKind, number>) {
    this.limiters = { write: new WindowLimiter(perSecond.write, 1000), typing: new WindowLimiter(perSecond.typing, 1000) };
  }

  /** Counts one `operation` of the user; RATE_LIMITED when over its budget. */
  admit(operation: LimitedOperation, p: Principal): ApiError | undefined {
    const kind = WRITE_POLICY[operation];
    const d = this.limiters[kind].hit(`${p.appId}/${p.userId}`);
    if (d.allowed) return undefined;
    const what = kind === 'typing' ? 'typing indicators' : 'edits, deletes, reactions, read marks and chat changes';
    return new ApiError('RATE_LIMITED', `at most ${this.perSecond[kind]} ${what} per second per user`, { retryAfterSeconds: d.retryAfterSeconds });
  }
}
