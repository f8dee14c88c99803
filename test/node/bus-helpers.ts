import type { Bus, Lease, LeaseCounts, Leases } from '../../node/bus/index.ts';
import { BackendUnavailableError } from '../../common/errors/index.ts';

/**
 * Resolves once `check` returns true, polling every `everyMs`; rejects after `withinMs`. For
 * conditions nothing announces (an expiry); an event that can be awaited is awaited instead.
 */
export async function eventually(what: string, check: () => Promise<boolean> | boolean, withinMs = 5_000, everyMs = 25): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > withinMs) throw new Error(`not within ${withinMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Leases with a switch: while `down`, every call rejects as a store out of reach would. One per
 * simulated node, so cutting one node (its heartbeats stop landing, as when it dies or is
 * partitioned) leaves the others working; the socket.io adapter tests' trick.
 */
export class SwitchedLeases implements Leases {
  down = false;
  constructor(private readonly inner: Leases) {}

  private check(): void {
    if (this.down) throw new BackendUnavailableError('test switch');
  }

  async renew(key: string, leases: readonly Lease[], ttlMs: number): Promise<LeaseCounts> {
    this.check();
    return this.inner.renew(key, leases, ttlMs);
  }

  async remove(key: string, members: readonly string[]): Promise<LeaseCounts> {
    this.check();
    return this.inner.remove(key, members);
  }

  async live(key: string): Promise<Lease[]> {
    this.check();
    return this.inner.live(key);
  }

  async count(key: string): Promise<number> {
    this.check();
    return this.inner.count(key);
  }

  async close(): Promise<void> {
    await this.inner.close();
  }
}

/** A logger that keeps warnings, so tests can show that failures were logged (and not thrown). */
export function recordingLog() {
  const lines: { message: string; context: object }[] = [];
  return { lines, warn: (context: object, message: string) => void lines.push({ message, context }) };
}

/** What a conformance suite needs of the lease store: one handle per simulated node, and a cleanup. */
export interface OpenedLeases {
  stores: Leases[];
  close: () => Promise<void>;
}

/** Whether a control message published on `from` reaches a subscriber on `to` (published again until it does, within 5 s). */
export async function controlCrosses(from: Bus, to: Bus, text: string): Promise<boolean> {
  const got: string[] = [];
  to.subscribe({ kind: 'control' }, (payload) => void got.push(Buffer.from(payload as Uint8Array).toString()));
  await to.ready();
  await eventually('a message crosses', () => {
    from.publish({ kind: 'control' }, text);
    return got.includes(text);
  });
  return got.includes(text);
}
