import { ApiError } from '../../common/index.ts';
import type { LoadShedder, WindowLimiter } from '../../common/limits/index.ts';
import type { Principal } from './local-ops.ts';
import type { AppActionBudget } from './write-limits.ts';

export interface SendAdmissionOptions {
  /** The applications' chat actions a second (APP_ACTIONS_PER_SECOND), shared with the other writes. */
  appActions: AppActionBudget;
  /** Each user's sends a second (USER_SENDS_PER_SECOND), and that figure for the refusal's message. */
  userSends: WindowLimiter;
  userSendsPerSecond: number;
  /** The node's load shedder (common/limits): refuses part of the new sends when the node falls behind. */
  shedder: Pick<LoadShedder, 'begin'>;
  /** A send was shed (for the metric). */
  onShed?: () => void;
}

/**
 * Whether this node takes a new message, decided once per send, REST and WebSocket alike, before
 * any work is done for it: the application's action budget, then the user's send rate, then the
 * load shedder; each refusal is RATE_LIMITED with a retry hint. A send taken is timed to its
 * answer for the shedder, which counts only sends served (an answer that is an ApiError further on
 * was not). Only the node that took the send admits it: a send forwarded to the chat's owner is
 * not admitted again there.
 */
export class SendAdmission {
  constructor(private readonly options: SendAdmissionOptions) {}

  /** The refusal, or the function to call once the send is answered, with whether it was served. */
  admit(p: Principal): ApiError | ((served: boolean) => void) {
    const { appActions, userSends, userSendsPerSecond, shedder, onShed } = this.options;
    const overApp = appActions.admit(p.appId);
    if (overApp) return overApp;
    const rate = userSends.hit(`${p.appId}/${p.userId}`);
    if (!rate.allowed) return new ApiError('RATE_LIMITED', `at most ${userSendsPerSecond} messages per second per user`, { retryAfterSeconds: rate.retryAfterSeconds });
    const done = shedder.begin(p.appId);
    if (done) return (served) => done(served);
    onShed?.();
    return new ApiError('RATE_LIMITED', 'this node is overloaded: retry shortly', { retryAfterSeconds: 1 });
  }
}
