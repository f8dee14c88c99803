/** The operator's command line: parsing (no store needed) and the commands, run against a store. */
import type { ControlStore } from '../store/index.ts';
import { listApps, moveApp, setAppStatus, showApp } from './apps.ts';
import { listClusters, registerCluster } from './clusters.ts';
import type { Command } from './parse.ts';
import type { ExitCode, Io } from './output.ts';

export { parseCommand, UsageError, type Command } from './parse.ts';
export { EXIT, type ExitCode, type Io } from './output.ts';
export { openStore } from './store.ts';

/** Runs a parsed command (other than help) against `store`. */
export function runCommand(command: Exclude<Command, { type: 'help' }>, store: ControlStore, io: Io, now: string): Promise<ExitCode> {
  switch (command.type) {
    case 'app.show':
      return showApp(store, io, command.appId);
    case 'app.status':
      return setAppStatus(store, io, command.appId, command.status, now);
    case 'app.list':
      return listApps(store, io, command.cluster, command.json);
    case 'app.move':
      return moveApp(store, io, command.appId, command.tier, command.cluster, now);
    case 'cluster.list':
      return listClusters(store, io, command.json);
    case 'cluster.register':
      return registerCluster(store, io, command.name, command.endpoint, command.status, now);
    default: {
      const unknown: never = command;
      return Promise.resolve(unknown);
    }
  }
}
