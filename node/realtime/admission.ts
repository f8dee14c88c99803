/** Where a node learns an application's tier (the control store's record). */
export type TierSource = (appId: string) => Promise<string | undefined>;

export interface AdmissionOptions {
  tierOf: TierSource;
  /** Distinct users of the application connected now: on this node alone, or cluster-wide (presence). */
  usersOnline: (appId: string) => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  /** The DEMO tier's ceiling of users connected at once (DEMO_MAX_CONCURRENT_USERS). */
  demoCeiling: number;
  /** How long a tier read from the store is trusted (ms); a tier change is seen within it. */
  ttlMs: number;
  now?: () => number;
}

/** Seconds a client refused for the ceiling is told to wait before trying again. */
export const CEILING_RETRY_SECONDS = 30;

/**
 * The ceiling of concurrent users of DEMO applications, cluster-wide: a socket of a user not yet
 * connected anywhere is refused while the application already has `demoCeiling` distinct users
 * connected; a user already connected opens more sockets freely, and nobody connected is ever
 * touched. Sockets opening at the same instant may pass it by the number in flight (the count is
 * read, not reserved).
 */
export class Admission {
  private readonly tiers = new Map<string, { tier: string | undefined; until: number }>();
  private readonly now: () => number;

  constructor(private readonly options: AdmissionOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Undefined when the user may connect; else the seconds to wait before trying again. */
  async admit(appId: string, userId: string): Promise<number | undefined> {
    if ((await this.tier(appId)) !== 'DEMO') return undefined;
    const users = await this.options.usersOnline(appId);
    if (users.has(userId) || users.size < this.options.demoCeiling) return undefined;
    return CEILING_RETRY_SECONDS;
  }

  private async tier(appId: string): Promise<string | undefined> {
    const known = this.tiers.get(appId);
    if (known && known.until > this.now()) return known.tier;
    const tier = await this.options.tierOf(appId);
    if (this.tiers.size >= 100_000) this.tiers.clear();
    this.tiers.set(appId, { tier, until: this.now() + this.options.ttlMs });
    return tier;
  }
}
