import { readFileSync } from 'node:fs';
import { channelOf } from '../../../node/bus/bus.ts';
import type { Verdict } from './checker.ts';
import { now } from './clients.ts';
import { haProcess, keySlot, masterOfSlot, redisClusterNodes, restartMissing, type Harness } from './harness.ts';

/**
 * The seven faults of a nemesis run. Each phase runs steady load, injects ONE fault, holds it,
 * heals it, lets the cluster recover, and is then checked (run.ts).
 */

export interface Timing {
  /** Load before the fault. */
  warmMs: number;
  /** How long the fault is held. */
  holdMs: number;
  /** Load after the heal. */
  recoverMs: number;
  /** After the load stops: how long unacknowledged sends keep being retried. */
  drainMs: number;
  /** Sends per second over all senders. */
  rate: number;
}

export interface FaultContext {
  h: Harness;
  chats: string[];
  timing: Timing;
  log(line: string): void;
  notes: string[];
}

export interface Injected {
  target: string;
  /** The URL of the chat node the fault hit, if it hit one. */
  node?: string;
  /** How long to hold it (the phase's hold unless the fault needs its own). */
  holdMs?: number;
  heal(): Promise<void>;
}

export interface PhaseDef {
  id: string;
  title: string;
  /** `ha`: the HA topology (several Cassandra and Redis nodes); `faults`: nftables and cgroups. */
  needs: ('ha' | 'faults')[];
  inject(ctx: FaultContext): Promise<Injected>;
  /** Bounds beyond the violations, checked by the test. */
  bounds?(v: Verdict): { name: string; limit: number; value: number; detail?: string }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The chat node owning most of the phase's chats (by the placement the nodes compute). */
function busiestOwner(ctx: FaultContext): number {
  const count = new Map<number, number>();
  for (const chatId of ctx.chats) {
    const i = ctx.h.cluster.nodes.indexOf(ctx.h.cluster.ownerOf(ctx.h.appId, chatId));
    count.set(i, (count.get(i) ?? 0) + 1);
  }
  return [...count].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** The Cassandra node a phase hits (NEMESIS_CASSANDRA_NODE, the first by default) and its process. */
function cassandraVictim(ctx: FaultContext) {
  const i = Number(process.env.NEMESIS_CASSANDRA_NODE ?? 0);
  const host = ctx.h.topology.cassandraAddresses[i]!;
  const port = Number(ctx.h.topology.cassandra.split(',')[i]!.split(':')[1] ?? 9042);
  const victim = haProcess(host, port, 'cassandra');
  if (!cmdline(victim.pid).includes('CassandraDaemon')) throw new Error(`${host}:${port} is not a Cassandra node (pid ${victim.pid})`);
  return { i, host, port, victim };
}

function signal(ctx: FaultContext, pid: number, sig: NodeJS.Signals): void {
  if (ctx.h.faults) ctx.h.faults.kill(pid, sig);
  else process.kill(pid, sig);
}

export const PHASES: PhaseDef[] = [
  {
    id: '1',
    title: 'kill -9 a Cassandra node, then restart it',
    needs: ['ha'],
    inject: async (ctx) => {
      const { i, host, port, victim } = cassandraVictim(ctx);
      if (!victim.pidFileAgrees) ctx.notes.push(`${victim.pidFile} does not name pid ${victim.pid}`);
      signal(ctx, victim.pid, 'SIGKILL');
      return {
        target: `Cassandra node ${i + 1} (${host}:${port}, pid ${victim.pid} from ${victim.pidFile}), SIGKILL`,
        heal: async () => {
          const took = await restartMissing(victim.stateDir, ctx.log);
          const back = haProcess(host, port, 'cassandra');
          ctx.notes.push(`Cassandra node ${i + 1} restarted by scripts/services.sh start --topology ha (new pid ${back.pid}); the ring was ready (3 nodes UN) ${(took / 1000).toFixed(1)} s after the heal began`);
        },
      };
    },
    // Two replicas of three still make LOCAL_QUORUM: sends go on being acknowledged.
    bounds: (v) => [{ name: 'longest time a busy chat had no acknowledgement', limit: 5000, value: v.worstChatStallMs, detail: v.worstChatStall }],
  },
  {
    id: '2',
    title: "kill the Redis master of busy chats' channels, then restart it",
    needs: ['ha'],
    inject: async (ctx) => {
      const prefix = `${ctx.h.cluster.env.CLUSTER_NAME}:`;
      const bySlot = new Map<string, number[]>();
      for (const chatId of ctx.chats) {
        const channel = channelOf(prefix, { kind: 'chat', appId: ctx.h.appId, chatId });
        const slot = await keySlot(ctx.h.topology, channel);
        const master = await masterOfSlot(ctx.h.topology, slot);
        if (!master) throw new Error(`no master serves slot ${slot}`);
        bySlot.set(master, [...(bySlot.get(master) ?? []), slot]);
      }
      // NEMESIS_REDIS_MASTER=nodes: the master of the node list's key instead (`<prefix>l:{nodes}`).
      if (process.env.NEMESIS_REDIS_MASTER === 'nodes') {
        const slot = await keySlot(ctx.h.topology, `${prefix}l:{nodes}`);
        const m = await masterOfSlot(ctx.h.topology, slot);
        if (!m) throw new Error(`no master serves slot ${slot}`);
        bySlot.clear();
        bySlot.set(m, [slot]);
      }
      const [master, slots] = [...bySlot].sort((a, b) => b[1].length - a[1].length)[0]!;
      const host = master.split(':')[0]!;
      const victim = haProcess(host, Number(master.split(':')[1] ?? 6379), 'redis');
      const pid = victim.pid;
      if (!cmdline(pid).includes('redis-server')) throw new Error(`${master} is not a Redis (pid ${pid})`);
      if (!victim.pidFileAgrees) ctx.notes.push(`${victim.pidFile} does not name pid ${pid}`);
      signal(ctx, pid, 'SIGKILL');
      const killedAt = now();
      // A replica is promoted once the others agree it failed (cluster-node-timeout, then the election).
      void (async () => {
        while (now() - killedAt < 30_000) {
          const m = await masterOfSlot(ctx.h.topology, slots[0]!, [host]).catch(() => undefined);
          if (m && m !== master) return ctx.notes.push(`slot ${slots[0]} served by the promoted replica ${m} ${((now() - killedAt) / 1000).toFixed(1)} s after the kill`);
          await sleep(250);
        }
        ctx.notes.push(`no replica promoted for slot ${slots[0]} within 30 s`);
      })();
      return {
        target: `Redis master ${master} (pid ${pid}) serving slots ${slots.join(', ')} of ${slots.length} busy chats' channels, SIGKILL`,
        heal: async () => {
          const took = await restartMissing(victim.stateDir, ctx.log);
          let role = 'unknown';
          for (const start = now(); now() - start < 20_000; await sleep(500)) {
            const seen = await redisClusterNodes(ctx.h.topology).catch(() => undefined);
            const me = seen?.nodes.find((n) => n.address === master);
            role = me ? `${me.flags.filter((f) => f !== 'myself').join(',')}${me.connected ? ', connected' : ''}` : 'absent';
            if (me?.connected && me.flags.includes('slave')) break;
          }
          ctx.notes.push(`${master} restarted in ${(took / 1000).toFixed(1)} s; it is now: ${role}`);
        },
      };
    },
  },
  {
    id: '3',
    title: 'partition a chat node from Redis only',
    needs: ['ha', 'faults'],
    inject: async (ctx) => {
      const i = ctx.h.cluster.nodes.indexOf(ctx.h.cluster.ownerOf(ctx.h.appId, ctx.chats[0]!));
      const name = await ctx.h.enlistNode(i);
      const cut = await ctx.h.faults!.cut(name, ctx.h.topology.redisAddresses);
      return { target: `node ${i} (${ctx.h.cluster.nodes[i]!.url}, owner of the first busy chat) cut from ${ctx.h.topology.redisAddresses.join(', ')}`, node: ctx.h.cluster.nodes[i]!.url, heal: () => cut.heal() };
    },
  },
  {
    id: '4',
    title: 'partition a chat node from everything else',
    needs: ['faults'],
    inject: async (ctx) => {
      const i = busiestOwner(ctx);
      const name = await ctx.h.enlistNode(i);
      // The peers must be enlisted too: their connections to the isolated node are cut on their side.
      for (let k = 0; k < ctx.h.cluster.nodes.length; k++) if (ctx.h.cluster.nodes[k]!.process.alive()) await ctx.h.enlistNode(k);
      const cut = await ctx.h.faults!.isolate(name);
      if (ctx.h.topology.kind === 'single') ctx.notes.push('single topology: Cassandra and Redis listen on 127.0.0.1, which isolate leaves open; only the peers and the control service are cut');
      return {
        target: `node ${i} (${ctx.h.cluster.nodes[i]!.url}, owner of most busy chats) isolated from every other address (clients still reach it)`,
        node: ctx.h.cluster.nodes[i]!.url,
        // Long enough that the node's Redis clients give up their connections and open new ones
        // (isolated 16 s they did not, 24 s they did): then, healed, it gets its own new events
        // first and the backlog of the cut connections after them.
        holdMs: Math.max(24_000, ctx.timing.holdMs),
        heal: () => cut.heal(),
      };
    },
  },
  {
    id: '5',
    title: 'SIGSTOP the owner of busy chats past its hold, then SIGCONT',
    needs: [],
    inject: async (ctx) => {
      const i = busiestOwner(ctx);
      const node = ctx.h.cluster.nodes[i]!;
      const pid = node.process.pid;
      if (ctx.h.faults) ctx.h.faults.pause(pid);
      else process.kill(pid, 'SIGSTOP');
      const owned = ctx.chats.filter((c) => ctx.h.cluster.ownerOf(ctx.h.appId, c) === node).length;
      return {
        target: `node ${i} (${node.url}, pid ${pid}, owner of ${owned} of ${ctx.chats.length} busy chats), SIGSTOP`,
        node: node.url,
        // Longer than its hold (4 s) and its membership lease (3 s): others take its chats meanwhile.
        holdMs: Math.max(10_000, ctx.timing.holdMs),
        heal: async () => {
          if (ctx.h.faults) ctx.h.faults.resume(pid);
          else process.kill(pid, 'SIGCONT');
        },
      };
    },
  },
  {
    id: '6',
    title: 'restart every chat node in turn (SIGTERM, start again)',
    needs: [],
    inject: async (ctx) => {
      const cluster = ctx.h.cluster;
      const rolling = (async () => {
        for (let i = 0; i < cluster.nodes.length; i++) {
          const started = now();
          await cluster.nodes[i]!.process.stop();
          const stopped = now();
          await cluster.startNode(i);
          await cluster.settled(30_000);
          if (ctx.h.faults) await ctx.h.enlistNode(i);
          ctx.notes.push(`node ${i}: stopped in ${((stopped - started) / 1000).toFixed(1)} s, started and settled in ${((now() - stopped) / 1000).toFixed(1)} s`);
          await sleep(2000);
        }
      })();
      rolling.catch(() => undefined);
      return {
        target: 'nodes 0, 1, 2 one after another',
        // The hold is the rolling restart itself.
        holdMs: 0,
        heal: () => rolling,
      };
    },
  },
  {
    id: '7',
    title: 'SIGSTOP a Cassandra node, then SIGCONT',
    needs: ['ha'],
    inject: async (ctx) => {
      // A node that stops answering but keeps its connections open (a long GC pause, a process
      // stuck in I/O while it dies): unlike a killed one, no socket closes to tell the driver.
      const { i, host, port, victim } = cassandraVictim(ctx);
      if (ctx.h.faults) ctx.h.faults.pause(victim.pid);
      else process.kill(victim.pid, 'SIGSTOP');
      return {
        target: `Cassandra node ${i + 1} (${host}:${port}, pid ${victim.pid}), SIGSTOP`,
        heal: async () => {
          if (ctx.h.faults) ctx.h.faults.resume(victim.pid);
          else process.kill(victim.pid, 'SIGCONT');
          const took = await restartMissing(victim.stateDir, ctx.log);
          ctx.notes.push(`Cassandra node ${i + 1} resumed; the ring was ready (3 nodes UN) ${(took / 1000).toFixed(1)} s after the heal began`);
        },
      };
    },
    // Requests the frozen node coordinates go to another as well after SPECULATIVE_DELAY_MS (reads
    // and idempotent writes), or are tried again after CAS_TIMEOUT_MS (compare-and-sets): a stall
    // far shorter than the freeze (common/cassandra/client.ts).
    bounds: (v) => [{ name: 'longest time a busy chat had no acknowledgement', limit: 3000, value: v.worstChatStallMs, detail: v.worstChatStall }],
  },
];
