import { loadConfigOrExit } from '../common/config/index.ts';
import { EXIT, openStore, parseCommand, runCommand, UsageError, type Command, type ExitCode, type Io } from './cli/index.ts';

const HELP = `Usage: npm run ctl -- <command> [arguments]

Operator commands for the control service's store: LMDB under DATA_DIR (default ./data), or the
Cassandra keyspace with STORE=cassandra. They may run while the service runs; changes take effect
on the next request.

Applications:
  app list [--cluster <name>] [--json]
                           every application of every account, oldest first (with --cluster,
                           those bound to that cluster): a table, or one JSON object a line
  app show <appId>         print the application as JSON
  app suspend <appId>      set status SUSPENDED: the application gets no new API keys
                           (create and rotate answer 409 APP_SUSPENDED); existing keys keep working
  app reactivate <appId>   set status ACTIVE again
  app move <appId> [--tier DEMO|STANDARD] [--cluster <name>]   (at least one of them)
                           set the tier (and type): DEMO (at most DEMO_MAX_CONCURRENT_USERS users
                           connected at once) or STANDARD (no ceiling), which nodes see within
                           KEY_STATUS_TTL_MS; and bind the application to another cluster, which
                           must be registered and ACTIVE. API keys name the cluster they were made
                           for: the command lists the application's active keys that its new
                           cluster's nodes refuse (id, prefix), each of which must be rotated
  app tier <appId> <tier>  the same as: app move <appId> --tier <tier>

Clusters:
  cluster list [--json]    every cluster by name: name, id, endpoint, status and number of
                           applications; a table, or one JSON object a line
  cluster register <name> <endpoint> [--status ACTIVE|DRAINING|OFFLINE]
                           register a cluster, or change the endpoint (and status) of a registered
                           one; a new one is ACTIVE. <name> as CLUSTER_NAME (lower-case letters,
                           digits and '-'), <endpoint> the http(s) URL its clients reach it at.
                           ACTIVE: applications may be moved onto it; DRAINING: none may, its
                           applications keep working; OFFLINE: the same, and it does not serve

  help                     this text

Exit codes: 0 done, 1 not found or refused, 2 usage or configuration error.
`;

const io: Io = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text) };

async function main(argv: string[]): Promise<ExitCode> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${error.message}\n\n${HELP}`);
    return EXIT.usage;
  }
  if (command.type === 'help') {
    io.out(HELP);
    return EXIT.done;
  }
  const opened = await openStore(loadConfigOrExit(process.env));
  if (typeof opened === 'string') {
    io.err(`${opened}\n`);
    return EXIT.usage;
  }
  try {
    return await runCommand(command, opened.store, io, new Date().toISOString());
  } finally {
    await opened.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
