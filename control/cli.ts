import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { connectCassandra } from '../common/cassandra/index.ts';
import { loadConfigOrExit, type Config } from '../common/index.ts';
import { CassandraControlStore, LmdbControlStore } from './store/index.ts';
import { TIERS, type AppStatus, type Application, type ControlStore } from './store/index.ts';

const HELP = `Usage: npm run ctl -- <command> [arguments]

Operator commands for the control service's store: LMDB under DATA_DIR (default ./data), or the
Cassandra keyspace with STORE=cassandra. They may run while the service runs; changes take effect
on the next request.

Commands:
  app show <appId>         print the application as JSON
  app suspend <appId>      set status SUSPENDED: the application gets no new API keys
                           (create and rotate answer 409 APP_SUSPENDED); existing keys keep working
  app reactivate <appId>   set status ACTIVE again
  app tier <appId> <tier>  set the tier (and type): DEMO (at most DEMO_MAX_CONCURRENT_USERS users
                           connected at once) or STANDARD (no ceiling); nodes see it within
                           KEY_STATUS_TTL_MS
  help                     this text

Exit codes: 0 done, 1 not found, 2 usage or configuration error.
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function main(argv: string[]): Promise<number> {
  const [noun, verb, appId, tierArg] = argv;
  if (!noun || noun === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return noun ? 0 : 2;
  }
  const tier = TIERS.find((t) => t === tierArg?.toUpperCase());
  if (noun !== 'app' || !verb || !['show', 'suspend', 'reactivate', 'tier'].includes(verb) || !appId || !UUID.test(appId) || (verb === 'tier' && !tier)) {
    process.stderr.write(`unknown or incomplete command: ${argv.join(' ')}\n\n${HELP}`);
    return 2;
  }
  const config = loadConfigOrExit(process.env);
  const opened = await openStore(config);
  if (typeof opened === 'string') {
    process.stderr.write(`${opened}\n`);
    return 2;
  }
  const { store, close } = opened;
  try {
    const app = await store.applications.getById(appId);
    if (!app) {
      process.stderr.write(`application ${appId} not found\n`);
      return 1;
    }
    if (verb === 'show') {
      process.stdout.write(`${JSON.stringify(app, null, 2)}\n`);
      return 0;
    }
    if (verb === 'tier') {
      const moved: Application = { ...app, tier: tier!, type: tier!, updatedAt: new Date().toISOString() };
      if ((await store.applications.update(moved)) === 'not-found') {
        process.stderr.write(`application ${appId} not found\n`);
        return 1;
      }
      process.stdout.write(`application ${appId} is now ${tier}\n`);
      return 0;
    }
    const status: AppStatus = verb === 'suspend' ? 'SUSPENDED' : 'ACTIVE';
    const updated: Application = { ...app, status, updatedAt: new Date().toISOString() };
    if ((await store.applications.update(updated)) === 'not-found') {
      process.stderr.write(`application ${appId} not found\n`);
      return 1;
    }
    process.stdout.write(`application ${appId} is now ${status}\n`);
    return 0;
  } finally {
    await close();
  }
}

/** The store the service uses (STORE): LMDB under DATA_DIR, or the Cassandra keyspace. */
async function openStore(config: Readonly<Config>): Promise<{ store: ControlStore; close: () => Promise<void> } | string> {
  if (config.STORE === 'cassandra') {
    const client = connectCassandra({ contactPoints: config.CASSANDRA_CONTACT_POINTS, localDataCenter: config.CASSANDRA_LOCAL_DC });
    return { store: new CassandraControlStore(client, config.CASSANDRA_KEYSPACE), close: () => client.shutdown() };
  }
  const path = join(config.DATA_DIR, 'control');
  if (!existsSync(path)) return `no store at ${path}; set DATA_DIR to the service's data directory`;
  const store = LmdbControlStore.open(path);
  return { store, close: () => store.close() };
}

process.exitCode = await main(process.argv.slice(2));
