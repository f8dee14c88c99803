import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, freemem, platform, release, totalmem } from 'node:os';

const ROOT = new URL('../..', import.meta.url).pathname;

const git = (...args: string[]) => {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};

const versionOf = (pkg: string) => {
  try {
    return (JSON.parse(readFileSync(`${ROOT}node_modules/${pkg}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
};

/** When, on what, and of which code a run was made: written with every result. */
export function runMeta() {
  const cpu = cpus();
  return {
    date: new Date().toISOString(),
    commit: git('rev-parse', '--short=12', 'HEAD') || 'unknown',
    // Changed code, not the results a run writes (which are committed after it).
    dirty: git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results', ':(exclude)bench/RESULTS.md') !== '',
    machine: {
      os: `${platform()} ${release()}`,
      cpu: cpu[0]?.model.trim() ?? 'unknown',
      cores: cpu.length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      freeMemoryGiB: Math.round(freemem() / 2 ** 30),
    },
    versions: {
      node: process.version,
      service: (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version,
      'uWebSockets.js': versionOf('uWebSockets.js'),
      'socket.io': versionOf('socket.io'),
      '@socket.io/redis-adapter': versionOf('@socket.io/redis-adapter'),
      lmdb: versionOf('lmdb'),
      'cassandra-driver': versionOf('cassandra-driver'),
      ioredis: versionOf('ioredis'),
    },
  };
}

export type RunMeta = ReturnType<typeof runMeta>;
