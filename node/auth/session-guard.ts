import { ApiError, BackendUnavailableError } from '../../common/index.ts';

/** Where a node learns whether an application still exists. Implemented over the control store. */
export interface AppStatusSource {
  isLive(appId: string): Promise<boolean>;
  /** The application's tier (DEMO, STANDARD), or undefined when it does not exist; absent: no tier ceilings. */
  tier?(appId: string): Promise<string | undefined>;
}

/** Where a node learns whether a chat user still exists. */
export interface UserExistence {
  exists(appId: string, userId: string): Promise<boolean>;
}

export interface SessionGuardOptions {
  apps: AppStatusSource;
  users: UserExistence;
  /** Whether a user is banned (see node/moderation); absent: nobody is. */
  banned?: (appId: string, userId: string) => Promise<boolean>;
  /** How long an application's status is trusted (KEY_STATUS_TTL_MS): a deletion is seen at most this late plus one lookup. */
  ttlMs: number;
  now?: () => number;
}

/**
 * Ties user sessions to their application and user. User JWTs are stateless, so without this a
 * deleted application's users would keep working until their tokens expired. Guarantees:
 * - every REST call, WebSocket action, new socket and refresh of a deleted application is refused
 *   at most `ttlMs` (plus one lookup) after the deletion, on every node, whether or not the
 *   deletion's announcement reaches the node (`appDeleted` only makes it immediate);
 * - a new socket or refresh of a deleted user is refused (its existence is read from the store);
 * - one lookup per application per `ttlMs` at most, however many requests; concurrent checks of
 *   one application share one lookup.
 */
export class SessionGuard {
  private readonly apps = new Map<string, { live: boolean; until: number }>();
  private readonly pending = new Map<string, Promise<boolean>>();
  private readonly now: () => number;

  constructor(private readonly options: SessionGuardOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Whether the application exists: at once when its status is fresh, else after one lookup. */
  appLive(appId: string): boolean | Promise<boolean> {
    const known = this.apps.get(appId);
    if (known && known.until > this.now()) return known.live;
    let lookup = this.pending.get(appId);
    if (!lookup) {
      lookup = this.options.apps.isLive(appId).then(
        (live) => {
          this.pending.delete(appId);
          // A deletion announced meanwhile wins over a lookup that started before it.
          if (this.apps.get(appId)?.until !== Number.POSITIVE_INFINITY) this.remember(appId, live);
          return this.apps.get(appId)!.live;
        },
        (error: unknown) => {
          this.pending.delete(appId);
          // The store cannot say: the last answer stands while it is down (an application cannot be
          // deleted meanwhile: deleting one needs the store too); without one, the request waits
          // for the store like any other (503).
          if (known) return known.live;
          throw new BackendUnavailableError('application status', { cause: error });
        },
      );
      this.pending.set(appId, lookup);
    }
    return lookup;
  }

  /** The application was deleted (announced by the control service): refuse its sessions now. */
  appDeleted(appId: string): void {
    this.remember(appId, false, Number.POSITIVE_INFINITY);
  }

  /** Why a session of this user may not go on, if it may not: its application or the user is gone, or the user is banned. */
  async ended(appId: string, userId: string): Promise<'app-deleted' | 'user-deleted' | 'user-banned' | undefined> {
    if (!(await this.appLive(appId))) return 'app-deleted';
    if (!(await this.options.users.exists(appId, userId))) return 'user-deleted';
    if (await this.options.banned?.(appId, userId)) return 'user-banned';
    return undefined;
  }

  private remember(appId: string, live: boolean, ttlMs = this.options.ttlMs): void {
    if (this.apps.size >= 100_000) this.apps.clear();
    this.apps.set(appId, { live, until: this.now() + ttlMs });
  }
}

export function appGone(): ApiError {
  return new ApiError('TOKEN_INVALID', 'the application of this token was deleted');
}

export function sessionEnded(why: 'app-deleted' | 'user-deleted'): ApiError {
  return why === 'app-deleted' ? appGone() : new ApiError('TOKEN_INVALID', 'the user of this token was deleted');
}
