import { ApiError } from '../../common/index.ts';
import type { ModerationStore } from '../store/index.ts';
import { BAN_STATUS_TTL_MS } from './ban-guard.ts';

/** Users whose block status a node remembers at most (then it forgets them all and reads again). */
const REMEMBERED = 100_000;

/**
 * Whether two users block each other (either way), as a direct chat's sends and its creation ask:
 * from memory while fresh (BAN_STATUS_TTL_MS), else two key reads. `changed` drops what is
 * remembered of a pair (a block or unblock here, or announced on the control topic).
 */
export class BlockGuard {
  private readonly known = new Map<string, { blocked: 'me' | 'them' | undefined; until: number }>();

  constructor(
    private readonly store: ModerationStore,
    private readonly ttlMs = BAN_STATUS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The refusal of `userId` writing to `otherId` in their direct chat, if one of them blocks the other. */
  refusal(appId: string, userId: string, otherId: string): ApiError | undefined | Promise<ApiError | undefined> {
    const key = `${appId}/${userId}/${otherId}`;
    const at = this.now();
    const hit = this.known.get(key);
    if (hit && hit.until > at) return refusalOf(hit.blocked);
    return Promise.all([this.store.blockOf(appId, userId, otherId), this.store.blockOf(appId, otherId, userId)]).then(([mine, theirs]) => {
      if (this.known.size >= REMEMBERED) this.known.clear();
      const blocked = mine ? 'me' : theirs ? 'them' : undefined;
      this.known.set(key, { blocked, until: at + this.ttlMs });
      return refusalOf(blocked);
    });
  }

  changed(appId: string, a: string, b: string): void {
    this.known.delete(`${appId}/${a}/${b}`);
    this.known.delete(`${appId}/${b}/${a}`);
  }
}

function refusalOf(blocked: 'me' | 'them' | undefined): ApiError | undefined {
  if (blocked === 'me') return new ApiError('USER_BLOCKED', 'you block this user: unblock them to write to them');
  if (blocked === 'them') return new ApiError('USER_BLOCKED', 'this user does not accept messages from you');
  return undefined;
}
