import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export interface Running {
  controlUrl: string;
  nodeUrl: string;
  /** Every service that logged where it listens, by name (control, node, demo). */
  urls: Readonly<Record<string, string>>;
  dataDir: string;
  /** Graceful stop (SIGTERM), waiting for the exit. */
  stop(): Promise<void>;
  /** kill -9, waiting for the exit. */
  kill(): Promise<void>;
  /** Lines the process wrote to stdout and stderr so far. */
  output(): string;
  /** Whether the process is still running. */
  alive(): boolean;
  /**
   * The process id (of the Node process itself, also when started through a shell for `nofile`):
   * what a fault-injection test signals, pauses or puts in a cgroup of its own.
   */
  pid: number;
}

/**
 * `command args` run with the soft and hard open-file limits raised to `nofile` where the user may
 * (root, or a hard limit already that high), else to the hard limit: a benchmark with 100k sockets
 * needs more than the usual 1024 or 20000. `exec` keeps the process id and inherited descriptors.
 */
export function withOpenFileLimit(nofile: number | undefined, command: string, args: string[]): [string, string[]] {
  if (nofile === undefined || process.platform === 'win32') return [command, args];
  const quoted = [command, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return ['/bin/sh', ['-c', `ulimit -Hn ${nofile} 2>/dev/null; ulimit -n ${nofile} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec ${quoted}`]];
}

export const ROOT = new URL('..', import.meta.url).pathname;

/** Where `npm run build:service` (bin/build-service.ts) writes the service compiled to JavaScript. */
export const BUILD_DIR = join(ROOT, 'build');
/** The scripts it compiles: the processes tests and benchmarks start many times. */
export const BUILT_SCRIPTS: readonly string[] = ['bin/start.ts', 'control/cli.ts', 'bin/keys.ts', 'bench/cli.ts', 'bench/load/worker.ts', 'bench/load/flood.ts', 'bench/peers/uws.ts', 'bench/peers/socketio.ts', 'demo/serve.ts'];

/**
 * The node arguments that run `script` (a path from the project root): its compiled form from
 * build/ when CHAT_SERVICE_BUILT=1 (`npm test` sets it after building), else the source through
 * tsx. A missing build is an error there, not a silent fall-back to a slower start.
 */
export function nodeScript(script: string): string[] {
  if (process.env.CHAT_SERVICE_BUILT !== '1' || !BUILT_SCRIPTS.includes(script)) return ['--import', 'tsx', join(ROOT, script)];
  const built = join(BUILD_DIR, script.replace(/\.ts$/, '.mjs'));
  if (!existsSync(built)) throw new Error(`CHAT_SERVICE_BUILT=1 but ${built} is missing: run npm run build:service`);
  return [built];
}

/**
 * util-linux's setpriv, where there is one (every Debian has it): a service started here gets
 * SIGKILL when the process that started it dies first. A test file that tap kills at its timeout
 * otherwise leaves its services running, heartbeating to services that are gone, on the CPU of
 * every file after it. setpriv execs the service, so its pid stays the one returned.
 */
const SETPRIV = process.platform === 'linux' && existsSync('/usr/bin/setpriv') ? '/usr/bin/setpriv' : undefined;

function diesWithParent([command, args]: [string, string[]]): [string, string[]] {
  return SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
}

/**
 * The V8 flags the service runs with: `npm start` passes the same (package.json), and
 * test/deployment/node-flags.test.ts checks that both agree.
 *
 * A young generation of up to 64 MiB a semi-space, where V8's default is 16. A send in flight
 * lives for tens to hundreds of milliseconds, with its message, its events and their webhook
 * deliveries. That is long enough to survive several scavenges of a small young generation, so it
 * gets copied and then promoted. With room to die young, one node took 8% more sends/s with no
 * webhook endpoint and 11% more with one: `npm run bench -- webhooks`, six alternating runs each,
 * 9,161 → 9,901 and 6,332 → 7,023. Three nodes on Cassandra at 2,474 msgs/s (`npm run bench --
 * cluster --systems chat --rate 2474 --no-overload`, alternating, Cassandra warm) had a p99 of 196
 * and 192 ms, against 299, 317 and 538 without. The cost is about 65 MB more resident memory at
 * peak. V8 grows the young generation only while the allocation rate needs it.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/** Data directories startService made, removed when this process exits (see madeDataDir). */
const madeDirs = new Set<string>();

/**
 * A new data directory under the system's temporary one. It is removed when the process that made
 * it exits, not when its service stops: restart tests reopen it until then. Before, every test run
 * left its directories behind (about a hundred, up to 11 MB each).
 */
function madeDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'chat-test-'));
  if (madeDirs.size === 0) process.once('exit', () => madeDirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  madeDirs.add(dir);
  return dir;
}

/**
 * Starts the real service (`bin/start.ts`) as a child process on free ports and resolves when both
 * services have logged that they listen. Each call gets its own data directory unless one is given
 * (which is how restart tests reopen the same store), removed when this process exits. Used by the
 * tests and the benchmarks.
 */
export async function startService(
  env: Record<string, string> = {},
  dataDir?: string,
  options: { script?: string; services?: string[]; nofile?: number; nodeArgs?: string[] } = {},
): Promise<Running> {
  const dir = dataDir ?? madeDataDir();
  const services = options.services ?? ['control', 'node'];
  const [command, args] = diesWithParent(withOpenFileLimit(options.nofile, process.execPath, [...SERVICE_NODE_FLAGS, ...(options.nodeArgs ?? []), ...nodeScript(options.script ?? 'bin/start.ts')]));
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dir, CONTROL_PORT: '0', NODE_PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const urls: Record<string, string> = {};
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    createInterface({ input: child.stderr! }).on('line', (l) => lines.push(l));
    rl.on('line', (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { event?: string; service?: string; url?: string };
        if (entry.event === 'listening' && entry.service && entry.url) urls[entry.service] = entry.url;
      } catch {
        /* not a log line */
      }
      if (services.every((name) => urls[name])) resolve();
    });
    void exited.then((code) => reject(new Error(`service exited with ${code} before listening:\n${lines.join('\n')}`)));
  });
  const waitExit = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    controlUrl: urls.control!,
    nodeUrl: urls.node!,
    urls,
    dataDir: dir,
    stop: () => waitExit('SIGTERM'),
    kill: () => waitExit('SIGKILL'),
    output: () => lines.join('\n'),
    alive: () => child.exitCode === null && child.signalCode === null,
    pid: child.pid!,
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}


/**
 * A currently free port on a loopback address (127.0.0.1 unless another is given, for a service
 * that listens on an address of its own). For restart tests only: a service first bound to port 0
 * leaves connections whose TIME_WAIT blocks rebinding that port for a minute, while one bound to a
 * fixed port sets SO_REUSEADDR and can be restarted on it at once.
 */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
