import { createLogger, loadConfigOrExit } from '../common/index.ts';
import { startDeployment } from './deployment.ts';

const HELP = `Usage: npm start  (or: node --import tsx bin/start.ts)

Starts the chat service. Configuration comes from environment variables; see README.md,
section "Configuration", for every variable and its default. The main ones:
  ROLE          standalone (default) | control | node
  CONTROL_PORT  management interface port (default 8080)
  NODE_PORT     cluster node port, REST and WebSocket (default 8081)
  DATA_DIR      embedded store directory (default ./data)
  STORE         embedded (default) | cassandra
  BUS           memory (default) | redis: several nodes as one cluster (needs STORE=cassandra)
`;

if (process.argv.includes('--help') || process.argv.includes('-h')) {
  process.stdout.write(HELP);
  process.exit(0);
}

const config = loadConfigOrExit(process.env);

const log = createLogger(config.LOG_LEVEL, 'chat-service');
const deployment = await startDeployment(config, log);

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
