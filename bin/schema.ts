import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, loadConfigOrExit, type Config, type Logger } from '../common/index.ts';
import { LmdbNodeStore } from '../node/index.ts';
import { backfillSearch, reindexSearch, type SearchBackfillProgress } from '../node/store/cassandra/search-backfill.ts';
import { prepareCassandra } from './stores.ts';

const HELP = `Usage: npm run schema
       npm run schema -- reindex [--resume]

Creates the Cassandra/ScyllaDB keyspace (SimpleStrategy, CASSANDRA_REPLICATION_FACTOR) and every
table of the control service and the nodes, or applies the migrations it lacks. Safe to run again:
applied migrations are recorded in <keyspace>.schema_migrations. The service runs the same step at
start when STORE=cassandra. A migration that reads every message (node-026-search-days, which
indexes every message into the search layout it makes) is best run so, before the nodes of a new
version start, on a large keyspace.

reindex: indexes every stored message for search again, from the first (for messages written
while SEARCH_INDEX=off, which nothing indexed), logging the messages indexed so far every few
seconds. STORE=cassandra: applies the migrations as above, then runs the backfill of
node-026-search-days from the start. STORE=embedded: opens the store under DATA_DIR/node and
runs its backfill from the start (it may run while the node runs: a message indexed twice is
harmless). Progress is saved as it goes: --resume goes on from where an interrupted reindex
stopped instead of starting over (a node's start on STORE=embedded goes on with it too). Needs
SEARCH_INDEX=on.

Reads CASSANDRA_CONTACT_POINTS, CASSANDRA_LOCAL_DC, CASSANDRA_KEYSPACE and
CASSANDRA_REPLICATION_FACTOR (see README.md, "Configuration"); reindex also STORE, DATA_DIR and
SEARCH_INDEX.
Exit codes: 0 done, 1 Cassandra unreachable, a statement failed or the reindex failed,
2 configuration error (or unknown arguments).
`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}
const reindex = args[0] === 'reindex';
const resume = reindex && args.includes('--resume');
if (args.some((a) => a !== 'reindex' && a !== '--resume') || (args.length > 0 && !reindex)) {
  process.stderr.write(`unknown arguments: ${args.join(' ')}\n\n${HELP}`);
  process.exit(2);
}

const config = loadConfigOrExit(process.env);
const log = createLogger(config.LOG_LEVEL, 'schema');
if (reindex && config.SEARCH_INDEX !== 'on') {
  process.stderr.write('SEARCH_INDEX=off: no search index is kept, so there is none to build (set SEARCH_INDEX=on)\n');
  process.exit(2);
}
const nodeDir = join(config.DATA_DIR, 'node');
if (reindex && config.STORE === 'embedded' && !existsSync(nodeDir)) {
  process.stderr.write(`no embedded store at ${nodeDir} (DATA_DIR=${config.DATA_DIR})\n`);
  process.exit(2);
}

/** Logs `read()` every few seconds until the returned function is called. */
function every(read: () => object, message: string): () => void {
  const timer = setInterval(() => log.info(read(), message), 5_000);
  return () => clearInterval(timer);
}

async function reindexCassandra(c: Readonly<Config>, l: Logger): Promise<void> {
  const { client, applied } = await prepareCassandra(c);
  try {
    if (applied.length) l.info({ keyspace: c.CASSANDRA_KEYSPACE, applied }, `applied ${applied.join(', ')}`);
    let latest: SearchBackfillProgress | undefined;
    const stop = every(() => ({ indexed: latest?.messagesNow ?? 0, lastToken: latest?.lastToken }), 'reindexing: messages indexed so far');
    try {
      const run = resume ? backfillSearch : reindexSearch;
      const done = await run(client, c.CASSANDRA_KEYSPACE, { onProgress: (p) => (latest = p) });
      l.info({ keyspace: c.CASSANDRA_KEYSPACE, indexed: done.messagesNow, total: done.messages, resumed: done.resumed }, `reindexed: ${done.messagesNow} messages indexed`);
    } finally {
      stop();
    }
  } finally {
    await client.shutdown();
  }
}

async function reindexEmbedded(l: Logger): Promise<void> {
  const store = LmdbNodeStore.open(nodeDir, undefined, { searchIndex: true });
  const stop = every(() => {
    const p = store.search.backfillProgress();
    return { indexed: p.messages, read: p.scanned };
  }, 'reindexing: messages indexed so far');
  try {
    // Opening goes on with a backfill that is not complete: `--resume` waits for it, else it starts over.
    const done = resume ? await store.search.backfill : await store.search.reindex();
    if (done.state !== 'complete') throw new Error(`the backfill ended ${done.state}`);
    await store.search.settled();
    l.info({ dir: nodeDir, messages: done.messages, read: done.scanned, resumedAt: done.resumedAt }, `reindexed: ${done.messages} messages indexed`);
  } finally {
    stop();
    await store.close();
  }
}

try {
  if (!reindex) {
    const { client, applied } = await prepareCassandra(config);
    log.info({ keyspace: config.CASSANDRA_KEYSPACE, applied }, applied.length ? `applied ${applied.join(', ')}` : 'schema up to date');
    await client.shutdown();
  } else if (config.STORE === 'cassandra') {
    await reindexCassandra(config, log);
  } else {
    await reindexEmbedded(log);
  }
} catch (error) {
  log.error({ err: error instanceof Error ? error.message : String(error) }, reindex ? 'reindex failed' : 'schema failed');
  process.exitCode = 1;
}
