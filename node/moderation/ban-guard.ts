import { ApiError } from '../../common/index.ts';
import type { ModerationStore, UserBan } from '../store/index.ts';

/**
 * How long a node trusts what it read of a user's ban. Bans are announced to every node at once
 * (the cluster's control topic); this bounds how late a node that missed the announcement sees one.
 */
export const BAN_STATUS_TTL_MS = 5_000;
/** Users whose ban status a node remembers at most (then it forgets them all and reads again). */
const REMEMBERED = 100_000;

/**
 * Whether a user is banned, as the node's checks ask it on every user request: from memory while
 * fresh (at most BAN_STATUS_TTL_MS, and never past a ban's expiry, so a timed ban lifts on time),
 * else one store read. `changed` drops what is remembered (a ban or unban here or announced).
 */
export class BanGuard {
  private readonly known = new Map<string, { ban: UserBan | undefined; until: number }>();

  constructor(
    private readonly store: ModerationStore,
    private readonly ttlMs = BAN_STATUS_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The user's ban in force, if any. */
  ban(appId: string, userId: string): UserBan | undefined | Promise<UserBan | undefined> {
    const key = `${appId}/${userId}`;
    const at = this.now();
    const hit = this.known.get(key);
    if (hit && hit.until > at) return hit.ban;
    return this.store.banOf(appId, userId, new Date(at).toISOString()).then((ban) => {
      if (this.known.size >= REMEMBERED) this.known.clear();
      const lifts = ban?.expiresAt === undefined ? Infinity : Date.parse(ban.expiresAt);
      this.known.set(key, { ban, until: Math.min(at + this.ttlMs, lifts) });
      return ban;
    });
  }

  /** The refusal of a banned user's request, or undefined when the user is not banned. */
  refusal(appId: string, userId: string): ApiError | undefined | Promise<ApiError | undefined> {
    const ban = this.ban(appId, userId);
    return ban instanceof Promise ? ban.then(refusalOf) : refusalOf(ban);
  }

  changed(appId: string, userId: string): void {
    this.known.delete(`${appId}/${userId}`);
  }
}

function refusalOf(ban: UserBan | undefined): ApiError | undefined {
  if (!ban) return undefined;
  const until = ban.expiresAt ? ` until ${ban.expiresAt}` : '';
  return new ApiError('USER_BANNED', `this user is banned from the application${until}${ban.reason ? `: ${ban.reason}` : ''}`);
}
