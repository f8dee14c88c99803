import cassandra from 'cassandra-driver';
import { BackendUnavailableError } from '../errors/index.ts';

export type CassandraClient = cassandra.Client;

export interface CassandraOptions {
  /** `host:port` list, comma-separated (CASSANDRA_CONTACT_POINTS); the port defaults to 9042. */
  contactPoints: string;
  localDataCenter: string;
  /** Default keyspace of the session; stores still name their keyspace in every statement. */
  keyspace?: string;
}

const { consistencies } = cassandra.types;

/**
 * Options of every data statement (reads, writes, compare-and-sets):
 * - `prepare: true`: parsed once per node, values bound by type (bigint columns take JS numbers,
 *   and no value is ever spliced into CQL text).
 * - `consistency: LOCAL_QUORUM`: a write is acknowledged by a majority of the local DC's replicas
 *   and a read consults a majority, so a read after an acknowledged write sees it with any
 *   replication factor, without waiting on other data centers.
 * - `serialConsistency: LOCAL_SERIAL`: the Paxos round of a lightweight transaction (`IF NOT
 *   EXISTS`, `IF col = ?`) runs among the local DC's replicas; that is what keeps usernames,
 *   direct pairs, refresh tokens and signing keys unique and read marks monotonic. Uniqueness is
 *   therefore per DC: several DCs accepting writes for one application would need SERIAL.
 * These are the same on ScyllaDB. They are passed with each statement (see `cql`), not only as
 * client defaults, so a store keeps them whichever client it is given.
 */
export const STATEMENT_OPTIONS: Readonly<cassandra.QueryOptions> = Object.freeze({
  prepare: true,
  consistency: consistencies.localQuorum,
  serialConsistency: consistencies.localSerial,
});

/**
 * DDL: not prepared (a schema statement runs once; preparing it only adds a round trip), and
 * waited for up to a minute rather than the 12 s of other statements: a schema change waits for
 * Cassandra's flush of its schema tables, which on a busy node can queue behind a flush of every
 * table (a full commit log), and a node's start (CREATE KEYSPACE IF NOT EXISTS) failed on that.
 */
export const DDL_OPTIONS: Readonly<cassandra.QueryOptions> = Object.freeze({ prepare: false, readTimeout: 60_000 });

/** A statement of a batch: its CQL and positional values. */
export interface BatchStatement {
  query: string;
  params: unknown[];
}

/** What the stores use: a statement with positional values, and a batch of them. */
export interface Cql {
  execute(query: string, params?: unknown[], options?: cassandra.QueryOptions): Promise<cassandra.types.ResultSet>;
  /**
   * Statements sent as one request. Unlogged unless `logged` is asked for: Cassandra applies the
   * statements of one partition as one atomic mutation, and those of several partitions
   * independently. With a condition (`IF`), every statement must be of one partition (a
   * conditional batch: one compare-and-set that applies all or none).
   */
  batch(statements: BatchStatement[], options?: cassandra.QueryOptions): Promise<cassandra.types.ResultSet>;
}

/** Response codes meaning the database cannot serve now (not that the statement is wrong). */
const UNAVAILABLE_CODES = new Set([0x1000 /* unavailable */, 0x1001 /* overloaded */, 0x1002 /* bootstrapping */, 0x1100 /* write timeout */, 0x1200 /* read timeout */]);

/**
 * Errors that mean "the database is down or too slow", as BackendUnavailableError (the HTTP layer
 * answers 503, nothing is acknowledged), with the driver's error as `cause` (its `code` tells a
 * timeout, whose outcome is unknown, from a refusal). Anything else (a bad statement) stays as is.
 */
export function asUnavailable(error: unknown): unknown {
  const { errors } = cassandra;
  const code = (error as { code?: unknown }).code;
  const down =
    // The connection to the coordinator closed (a node died): before the request was written
    // nothing happened; after, its outcome is unknown. Either way the database did not answer.
    (error as { isSocketError?: unknown }).isSocketError === true ||
    error instanceof errors.NoHostAvailableError ||
    error instanceof errors.OperationTimedOutError ||
    error instanceof errors.BusyConnectionError ||
    (error instanceof errors.ResponseError && typeof code === 'number' && UNAVAILABLE_CODES.has(code));
  return down ? new BackendUnavailableError('cassandra', { cause: error }) : error;
}

const driverError = (error: unknown): unknown => (error instanceof BackendUnavailableError ? error.cause : error);

/** The driver's response code of an error, looking through BackendUnavailableError. */
export const responseCode = (error: unknown): number | undefined => {
  const code = (driverError(error) as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
};

const WRITE_TIMEOUT = 0x1100;
const READ_TIMEOUT = 0x1200;

/**
 * Whether an error is a timeout (the server's or the driver's), looking through
 * BackendUnavailableError: the statement may or may not have been applied, so a compare-and-set
 * must find out rather than assume either.
 */
export const timedOut = (error: unknown): boolean => {
  const code = responseCode(error);
  const cause = driverError(error) as { isSocketError?: unknown; requestNotWritten?: unknown } | undefined;
  const lostMidRequest = cause?.isSocketError === true && cause.requestNotWritten !== true;
  return code === WRITE_TIMEOUT || code === READ_TIMEOUT || lostMidRequest || driverError(error) instanceof cassandra.errors.OperationTimedOutError;
};

const READ = /^\s*SELECT\b/i;
const SERIAL = new Set<number>([consistencies.serial, consistencies.localSerial]);
/** A compare-and-set: `IF NOT EXISTS`, `IF EXISTS`, `IF col = ?`. */
const CONDITIONAL = /\bIF\b/i;
/** Arithmetic on a column (`n = n + ?`, a counter; `l = ? + l`, a list) or a value the server makes. */
const CHANGES_AGAIN = /=\s*[\w?]+\s*[-+]|\bnow\s*\(|\buuid\s*\(/i;

/**
 * What a statement is, for the driver:
 * - `idempotent`: whether it may be sent again (a retry on another node, a speculative second
 *   execution): a read that is not a Paxos round, or a write that applied twice is applied once.
 *   The driver gives every attempt of a request one client timestamp, so an upsert or a delete
 *   sent twice writes the same cells with the same timestamp; a compare-and-set, a counter, a list
 *   append or a server-made value does not repeat so. A serial read is a Paxos round: two at once
 *   on one partition contend with each other.
 * - `cas`: a compare-and-set, which gets the client timeout CAS_TIMEOUT_MS.
 */
function kindOf(query: string, options: cassandra.QueryOptions): { idempotent: boolean; cas: boolean } {
  if (READ.test(query)) return { idempotent: !SERIAL.has(options.consistency ?? -1), cas: false };
  const cas = CONDITIONAL.test(query);
  return { idempotent: !cas && !CHANGES_AGAIN.test(query), cas };
}

/**
 * How long a statement that may safely run twice waits for its coordinator before the driver sends
 * it to the next node as well (the first answer wins). A killed node closes its connections and
 * the driver moves on at once, but a node that stops answering with its connections open (a long
 * GC pause, a process stuck in I/O as it dies) would hold each request it coordinates until the
 * driver's read timeout (12 s), and whatever waits on the request (a chat's queue, every request
 * of an application whose status is being looked up) with it. Well above a healthy statement's
 * latency even on a busy two-core machine, so it rarely doubles work.
 */
export const SPECULATIVE_DELAY_MS = 500;

/**
 * How long a compare-and-set waits for its coordinator before it is taken as timed out (outcome
 * unknown: every caller reads again or tries again, as after Cassandra's own CAS timeout). It is
 * never sent twice at once (two rounds would contend), so a coordinator that stops answering is
 * left this way, not by speculative execution. The ring's write timeout: a live coordinator
 * answers by then, if only with a timeout of its own; and a chat's hold, renewed with 1.5 s left,
 * survives one silent coordinator with its writes waiting about a second (from 0.5 s left).
 */
export const CAS_TIMEOUT_MS = 2000;

/** `client` with STATEMENT_OPTIONS on every statement (options given per call still win). */
export function cql(client: Cql): Cql {
  const unavailable = (error: unknown) => {
    throw asUnavailable(error);
  };
  return {
    execute: (query, params = [], options = {}) => {
      const kind = kindOf(query, options);
      return client.execute(query, params, { ...STATEMENT_OPTIONS, isIdempotent: kind.idempotent, ...(kind.cas ? { readTimeout: CAS_TIMEOUT_MS } : {}), ...options }).catch(unavailable);
    },
    batch: (statements, options = {}) => {
      const kinds = statements.map((s) => kindOf(s.query, options));
      const cas = kinds.some((k) => k.cas);
      return client
        .batch(statements, { logged: false, ...STATEMENT_OPTIONS, isIdempotent: kinds.every((k) => k.idempotent), ...(cas ? { readTimeout: CAS_TIMEOUT_MS } : {}), ...options })
        .catch(unavailable);
    },
  };
}

export function connectCassandra(options: CassandraOptions): CassandraClient {
  const points = options.contactPoints.split(',').map((p) => p.trim()).filter(Boolean);
  if (points.length === 0) throw new Error('no Cassandra contact points');
  // The driver takes one native-protocol port for the whole cluster: that of the first point.
  const port = Number(points[0]!.split(':')[1] ?? 9042);
  return new cassandra.Client({
    contactPoints: points.map((p) => p.split(':')[0]!),
    protocolOptions: { port },
    localDataCenter: options.localDataCenter,
    ...(options.keyspace === undefined ? {} : { keyspace: options.keyspace }),
    queryOptions: { ...STATEMENT_OPTIONS },
    // A node recovers by itself within about a second of the database coming back (the default
    // backs off exponentially up to ten minutes).
    policies: {
      reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(1000),
      // One more coordinator for an idempotent statement unanswered after SPECULATIVE_DELAY_MS.
      speculativeExecution: new cassandra.policies.speculativeExecution.ConstantSpeculativeExecutionPolicy(SPECULATIVE_DELAY_MS, 1),
    },
    socketOptions: { connectTimeout: 5000, readTimeout: 12000 },
  });
}

/** Whether a lightweight transaction (`IF …`) was applied. */
export function applied(result: cassandra.types.ResultSet): boolean {
  return result.first()?.get('[applied]') === true;
}

/**
 * An `INSERT … IF NOT EXISTS` that claims a row for `holder` (in column `holderColumn`). A contended
 * compare-and-set may time out with its outcome unknown; the claim is then simply tried again:
 * a row found holding `holder` means the earlier attempt won. True when `holder` holds the row.
 */
export async function claimRow(
  db: Cql,
  query: string,
  params: unknown[],
  holderColumn: string,
  holder: string,
): Promise<{ won: boolean; row: cassandra.types.Row | undefined }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await db.execute(query, params, { ...STATEMENT_OPTIONS });
      const row = result.first() ?? undefined;
      if (applied(result)) return { won: true, row };
      return { won: row !== undefined && String(row.get(holderColumn)) === holder, row };
    } catch (error) {
      if (attempt >= 5 || !timedOut(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.random() * 50));
    }
  }
}
