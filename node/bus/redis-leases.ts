import { createHash } from 'node:crypto';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { BackendUnavailableError } from '../../common/errors/index.ts';
import type { Lease, LeaseCounts, Leases } from './leases.ts';
import { errorContext, stderrLogger, throttled, type BusLogger } from './log.ts';
import { clusterNodeOptions, clusterStartError, connectNodesAhead, quietDisconnect, refuseClusterNode, type RedisNodeAddress } from './redis-clients.ts';

export interface RedisLeasesOptions {
  /** The Redis; with `cluster`, only its user name, password and TLS (rediss://) are used. */
  url: string;
  /** Seed nodes of a Redis Cluster: when given, the leases live on the cluster instead of at `url`. */
  cluster?: readonly RedisNodeAddress[];
  /**
   * Prepended to every key, so clusters (or test runs) sharing a Redis stay apart. No '{' nor
   * '}': a key's hash tag must be the one run() puts around the lease key.
   */
  prefix?: string;
  log?: BusLogger;
  /** Extra ioredis options (TLS, timeouts); the ones this class relies on are set over them. */
  redis?: RedisOptions;
}

class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

// Time comes from Redis (TIME), so expiry does not depend on agreeing node clocks. Scores are
// expiry instants in ms; a member is live while its score is later than now. Numbers are
// formatted with %.0f because Lua would print 13-digit ones in exponent form.
const PRELUDE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function prune()
  local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
  if #gone == 0 then return end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now))
  for _, m in ipairs(gone) do redis.call('HDEL', KEYS[2], m) end
end
`;

const RENEW = new Script(`${PRELUDE}
prune()
local before = redis.call('ZCARD', KEYS[1])
local ttl = tonumber(ARGV[1])
local expiry = string.format('%.0f', now + ttl)
for i = 2, #ARGV, 2 do
  redis.call('ZADD', KEYS[1], expiry, ARGV[i])
  if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
end
local after = redis.call('ZCARD', KEYS[1])
-- The keys outlive their latest member and no longer, so a user nobody reads again leaves nothing.
for _, k in ipairs(KEYS) do
  local pttl = redis.call('PTTL', k)
  if pttl ~= -2 and pttl < ttl then redis.call('PEXPIRE', k, ttl) end
end
return {before, after}
`);

const REMOVE = new Script(`${PRELUDE}
prune()
local before = redis.call('ZCARD', KEYS[1])
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i])
end
return {before, redis.call('ZCARD', KEYS[1])}
`);

const LIVE = new Script(`${PRELUDE}
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
local out = {}
for _, m in ipairs(members) do
  out[#out + 1] = m
  out[#out + 1] = redis.call('HGET', KEYS[2], m) or ''
end
return out
`);

const COUNT = new Script(`${PRELUDE}
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%.0f', now), '+inf')
`);

/**
 * Leases in Redis: per key a sorted set of members scored by expiry, and a hash of their values,
 * changed only by Lua scripts (atomic, and timed by Redis's clock). The two keys share a hash tag,
 * so in a Redis Cluster they live in one slot as a script needs; every script touches only its
 * KEYS, and no other command takes several keys. One connection; a call made while Redis is away
 * fails after one reconnection attempt instead of waiting, and callers that heartbeat simply try
 * again on the next beat.
 *
 * On a Redis Cluster, one connection per master: a key's calls still take effect in the order
 * made, except around a failover or a slot migration, when ioredis follows MOVED and retries a
 * call whose connection closed (100 ms apart, 16 times at most, then it fails): a retried call may
 * then land after a later one, and re-run after it took effect. The worst case is the NOSCRIPT
 * fallback's (a removed member renewed again expires within one TTL), or a 0-to-some transition
 * reported to no caller. While the whole cluster is unreachable, calls fail at once.
 */
export class RedisLeases implements Leases {
  private readonly warn: (context: object) => void;

  private constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
    log: BusLogger,
  ) {
    this.warn = throttled(log, 'leases: Redis connection error');
    redis.on('error', (error: unknown) => this.warn(errorContext(error)));
  }

  /**
   * Rejects if Redis cannot be reached at start (BackendUnavailableError), or if `url` without
   * `cluster` names a node of a Redis Cluster (see refuseClusterNode); throws for a bad prefix.
   */
  static async connect(options: RedisLeasesOptions): Promise<RedisLeases> {
    const prefix = options.prefix ?? '';
    if (/[{}]/.test(prefix)) throw new RangeError(`a leases prefix must not contain '{' or '}': ${JSON.stringify(prefix)}`);
    const connectionName = `${prefix}leases`.replace(/[^\w:.-]/g, '_');
    const redis = options.cluster
      ? new Cluster(
          options.cluster.map((n) => ({ ...n })),
          { lazyConnect: true, enableOfflineQueue: false, redisOptions: { commandTimeout: 2_000, ...clusterNodeOptions(options.url, options.redis), connectionName } },
        )
      : new Redis(options.url, { commandTimeout: 2_000, ...options.redis, lazyConnect: true, maxRetriesPerRequest: 1, connectionName });
    if (redis instanceof Cluster) connectNodesAhead(redis);
    let reason: unknown;
    const remember = (error: unknown) => (reason ??= clusterStartError(error));
    redis.on('error', remember);
    redis.on('node error', remember);
    const leases = new RedisLeases(redis, prefix, options.log ?? stderrLogger);
    try {
      await redis.connect();
    } catch (error) {
      quietDisconnect(redis);
      throw new BackendUnavailableError('redis', { cause: reason ?? error });
    } finally {
      redis.off('error', remember);
      redis.off('node error', remember);
    }
    if (redis instanceof Redis) {
      const refused = await refuseClusterNode(redis, options.url).then(() => undefined, (error: unknown) => error);
      if (refused) {
        await leases.close();
        throw refused;
      }
    }
    return leases;
  }

  async renew(key: string, leases: readonly Lease[], ttlMs: number): Promise<LeaseCounts> {
    const args: string[] = [String(Math.max(1, Math.round(ttlMs)))];
    for (const { member, value } of leases) args.push(member, value);
    return counts(await this.run(RENEW, key, args));
  }

  async remove(key: string, members: readonly string[]): Promise<LeaseCounts> {
    return counts(await this.run(REMOVE, key, members));
  }

  async live(key: string): Promise<Lease[]> {
    const flat = (await this.run(LIVE, key, [])) as string[];
    const leases: Lease[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) leases.push({ member: flat[i]!, value: flat[i + 1]! });
    return leases.sort((a, b) => (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  }

  async count(key: string): Promise<number> {
    return Number(await this.run(COUNT, key, []));
  }

  async close(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private async run(script: Script, key: string, args: readonly string[]): Promise<unknown> {
    const set = `${this.prefix}l:{${key}}`;
    const keys = [set, `${set}:v`];
    try {
      try {
        return await this.redis.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        // Scripts are cached by Redis until it restarts or flushes them; then send the source.
        // Calls racing that fallback may apply out of order; the worst case is a removed member
        // renewed again, which nobody renews after that and so expires within one TTL.
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await this.redis.eval(script.source, keys.length, ...keys, ...args);
      }
    } catch (error) {
      throw new BackendUnavailableError('redis', { cause: error });
    }
  }
}

function counts(reply: unknown): LeaseCounts {
  const [before, after] = reply as [number, number];
  return { before: Number(before), after: Number(after) };
}
