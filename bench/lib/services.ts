import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Context } from '../scenarios/context.ts';
import { whileRunning } from './cleanup.ts';
import type { ClusterServices } from './targets.ts';

const SERVICES = new URL('../../scripts/services.sh', import.meta.url).pathname;

/** A service's pid from the file scripts/services.sh keeps in its state dir (same default). */
function servicePid(name: 'redis' | 'cassandra'): number | undefined {
  const dir = process.env.SERVICES_STATE_DIR ?? new URL('../../tmp/services', import.meta.url).pathname;
  try {
    const pid = Number(readFileSync(`${dir}/${name}/${name}.pid`, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether something accepts connections at `host:port` (within 2 s). */
function reachable(address: string): Promise<boolean> {
  const url = new URL(address.includes('://') ? address : `tcp://${address}`);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Cassandra and Redis for a run: those the environment names when they answer, else started with
 * scripts/services.sh (and stopped again by `stop`, also when the run is cut short).
 */
export async function clusterServices(ctx: Context): Promise<{ services: ClusterServices; stop: () => void }> {
  const cassandra = process.env.CASSANDRA_CONTACT_POINTS ?? `127.0.0.1:${process.env.CASSANDRA_PORT ?? 9042}`;
  const redisUrl = process.env.REDIS_URL ?? `redis://127.0.0.1:${process.env.REDIS_PORT ?? 6379}`;
  // `status` exits 0 only when both answer (and 1 when either is stopped or not ready yet); both
  // answering where the environment says (started some other way) will do as well.
  const wasReady = spawnSync(SERVICES, ['status'], { stdio: 'ignore' }).status === 0 || ((await reachable(cassandra.split(',')[0]!)) && (await reachable(redisUrl)));
  let stopServices = () => undefined as void;
  if (!wasReady) {
    ctx.progress.plan(1, 'starting Redis and Cassandra (scripts/services.sh)');
    execFileSync(SERVICES, ['start'], { stdio: ['ignore', 'ignore', 'inherit'] });
    stopServices = () => void execFileSync(SERVICES, ['stop'], { stdio: 'ignore' });
    ctx.progress.step();
  }
  const untrack = whileRunning(stopServices);
  return {
    services: { cassandra, redisUrl, redisPid: servicePid('redis'), cassandraPid: servicePid('cassandra') },
    stop: () => {
      untrack();
      stopServices();
    },
  };
}
