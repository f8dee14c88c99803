import { BackendUnavailableError, ConfigSchema, createLogger, ListenError, loadConfigOrExit, type Config } from '../common/index.ts';
import { startDeployment } from './deployment.ts';

/** The variables the help names, with a short gloss; their defaults come from the config schema. */
const MAIN: readonly [keyof typeof ConfigSchema.properties, string][] = [
  ['ROLE', 'standalone | control | node'],
  ['CONTROL_PORT', 'management interface port'],
  ['NODE_PORT', 'cluster node port, REST and WebSocket'],
  ['DATA_DIR', 'embedded store directory'],
  ['STORE', 'embedded | cassandra'],
  ['BUS', 'memory | redis: several nodes as one cluster (needs STORE=cassandra)'],
  ['NODE_RPC_PORT', 'cluster only: node-to-node listener port (0: a free port)'],
  ['NODE_RPC_ADDRESS', 'cluster only: host:port the other nodes dial (empty: HOST and that port)'],
];
const defaultOf = (name: keyof typeof ConfigSchema.properties) => String((ConfigSchema.properties[name] as { default?: unknown }).default);

const HELP = `Usage: npm start  (it compiles the service into build/ and runs node build/bin/start.mjs;
       the sources run as they are with: node --import tsx bin/start.ts)

Starts the chat service. Configuration comes from environment variables; see README.md,
section "Configuration", for every variable and its default. The main ones:
${MAIN.map(([name, gloss]) => `  ${name.padEnd(17)} ${gloss} (default ${defaultOf(name) || 'empty'})`).join('\n')}

Exits with status 2 when a setting is invalid (each bad variable named, with the values
allowed), and with status 1, with one line saying why, when a port is in use (ports are never
shared with another process) or Cassandra or Redis cannot be reached at start.
Operator commands, with the same environment: npm run ctl -- help (applications),
npm run keys -- help (signing keys: list, rotate).
`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const config = loadConfigOrExit(process.env);

const log = createLogger(config.LOG_LEVEL, 'chat-service');
const deployment = await startDeployment(config, log).catch((error: unknown) => {
  // Startup failed (a port in use, a store or bus that cannot be reached): one line saying why
  // and what to do, on stderr and in the log, and a non-zero exit. No stack: nothing here is a bug.
  const why = startFailure(error, config);
  log.fatal({ event: 'start_failed', code: (error as { code?: unknown } | undefined)?.code }, `cannot start: ${why}`);
  process.stderr.write(`cannot start: ${why}\n`);
  process.exit(1);
});

/** Why the service could not start, in one line, with the setting to look at. */
function startFailure(error: unknown, config: Readonly<Config>): string {
  if (error instanceof ListenError) return `${error.message}${portSetting(config, error.port)}`;
  const e = error as { name?: string; message?: string; cause?: { message?: string }; innerErrors?: Record<string, { message?: string }> } | undefined;
  const firstLine = (text: string | undefined) => (text ?? String(error)).split('\n')[0]!.trim();
  if (e?.name === 'NoHostAvailableError') {
    const inner = Object.values(e.innerErrors ?? {})[0];
    return `Cassandra cannot be reached at ${config.CASSANDRA_CONTACT_POINTS} (${firstLine(inner?.message ?? e.message)}): is it running? (scripts/services.sh start), or set CASSANDRA_CONTACT_POINTS`;
  }
  if (error instanceof BackendUnavailableError && error.backend === 'redis') {
    if (config.REDIS_CLUSTER_NODES) return `the Redis Cluster cannot be reached at ${config.REDIS_CLUSTER_NODES} (${firstLine(e?.cause?.message)}): is it running, and are these nodes of a cluster? Or set REDIS_CLUSTER_NODES`;
    return `Redis cannot be reached at ${redactUrl(config.REDIS_URL)} (${firstLine(e?.cause?.message)}): is it running? (scripts/services.sh start), or set REDIS_URL`;
  }
  return firstLine(e?.message);
}

/** A URL without its password, to be shown. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(REDIS_URL)';
  }
}

/** Which variable set the port that failed, as a hint for the message. */
function portSetting(config: Readonly<Config>, port: number): string {
  const names = (['NODE_PORT', 'CONTROL_PORT', 'NODE_RPC_PORT'] as const).filter((name) => config[name] === port);
  return names.length ? ` (${names.join(' / ')}); is another instance running? Stop it or choose another port` : '';
}

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  await deployment.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
