import type { BusHandler } from './bus.ts';

/**
 * Local handlers per channel, reference counted: `add` reports the first handler of a channel and
 * `remove` the last, which is when a transport subscribes or unsubscribes.
 */
export class Subscriptions {
  private readonly byChannel = new Map<string, Set<BusHandler>>();

  add(channel: string, handler: BusHandler): { first: boolean; remove: () => { last: boolean } } {
    let set = this.byChannel.get(channel);
    const first = !set;
    if (!set) this.byChannel.set(channel, (set = new Set()));
    // A wrapper per call, so the same function subscribed twice is removed once per subscription.
    const entry: BusHandler = (payload) => handler(payload);
    set.add(entry);
    let removed = false;
    return {
      first,
      remove: () => {
        if (removed) return { last: false };
        removed = true;
        set.delete(entry);
        if (set.size > 0 || this.byChannel.get(channel) !== set) return { last: false };
        this.byChannel.delete(channel);
        return { last: true };
      },
    };
  }

  deliver(channel: string, payload: Uint8Array): void {
    for (const handler of this.byChannel.get(channel) ?? []) {
      try {
        handler(payload);
      } catch {
        // One failing handler must not keep the event from the others.
      }
    }
  }

  channels(): string[] {
    return [...this.byChannel.keys()];
  }
}
