/**
 * What must be stopped if a run is cut short (its time bound, Ctrl-C): the servers and generator
 * processes it started. Each is registered while it runs and removed when stopped normally.
 */
const pending = new Set<() => Promise<void> | void>();

export function whileRunning(stop: () => Promise<void> | void): () => void {
  pending.add(stop);
  return () => pending.delete(stop);
}

/** Stops everything registered, each within `ms`. */
export async function stopAll(ms = 5000): Promise<void> {
  const all = [...pending];
  pending.clear();
  await Promise.all(all.map((stop) => Promise.race([Promise.resolve().then(stop).catch(() => undefined), new Promise((r) => setTimeout(r, ms))])));
}
