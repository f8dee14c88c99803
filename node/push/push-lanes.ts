/** What the lanes need of a push. */
export interface LanePush {
  /** Pushes of one lane replace each other: a device and a chat (the collapse key), or a sender and a chat. */
  readonly lane: string;
  /** When its message was sent (ms), and its outbox event's id for messages of the same millisecond: which is newer. */
  readonly sentAtMs: number;
  readonly eventId: string;
}

export interface LaneHandlers<T extends LanePush> {
  /** Makes the push (its attempt ends with `over`, or `replaced` before a retry). */
  start(push: T): void;
  /** `push` will not be made: `by`, a newer one of its lane, stands for it (it is marked done). */
  superseded(push: T, by: T): void;
}

const newer = (a: LanePush, b: LanePush) => a.sentAtMs > b.sentAtMs || (a.sentAtMs === b.sentAtMs && a.eventId > b.eventId);

/**
 * At most one push in flight per lane, and at most one waiting behind it: the newest. Every push
 * of a chat carries the chat's collapse key, so the push service (Web Push `Topic`,
 * `apns-collapse-id`, FCM `collapse_key`) and the device already keep only the newest of those
 * it holds; pushes made while an older one is still on its way would only replace each other
 * there. So a push that finds its lane busy waits, and one newer than it arriving meanwhile takes
 * its place (the older is marked done: the newer stands for it). The newest push of each lane is
 * always made; a busy chat costs a device one push per round trip to its service rather than one
 * per message, whatever the rate (push services throttle devices sent to faster than that). A
 * push older than the lane's newest is not made: the device would show the older message.
 * PushDelivery keeps two sets, each lane's starts at least a second apart by default
 * (PUSH_CHAT_INTERVAL_MS: a notification replaced faster tells its reader nothing more, and FCM
 * and APNs throttle a device sent to faster): per device and chat, and per sender and chat (a message's
 * recipients are worked out once a second, not once per message).
 */
interface Lane<T> {
  /** The push being made; none between its end and the lane's next start (the interval). */
  current: T | undefined;
  waiting: T | undefined;
  /** The last push started, and when. */
  last: T;
  startedAt: number;
  timer: NodeJS.Timeout | undefined;
}

export class PushLanes<T extends LanePush> {
  private readonly lanes = new Map<string, Lane<T>>();

  /** `intervalMs`: a lane's pushes start at least this far apart (0: as soon as the one before ends). */
  constructor(
    private readonly on: LaneHandlers<T>,
    private readonly intervalMs = 0,
  ) {}

  /** Lanes with a push in flight, waiting, or in their interval: for the tests. */
  get size(): number {
    return this.lanes.size;
  }

  /** A new push: made at once when its lane is free, else kept as the lane's waiting one when it is the lane's newest. */
  offer(push: T): void {
    const lane = this.lanes.get(push.lane);
    if (!lane) {
      this.lanes.set(push.lane, { current: push, waiting: undefined, last: push, startedAt: Date.now(), timer: undefined });
      return this.on.start(push);
    }
    const newest = lane.waiting ?? lane.last;
    if (!newer(push, newest)) return this.on.superseded(push, newest);
    const before = lane.waiting;
    lane.waiting = push;
    if (before) this.on.superseded(before, push);
  }

  /** The lane's current push is over (taken, refused, gone, given up, or no longer this node's): its waiting one is made once the interval is up. */
  over(push: T): void {
    const lane = this.lanes.get(push.lane);
    if (!lane || lane.current !== push) return;
    lane.current = undefined;
    const wait = lane.startedAt + this.intervalMs - Date.now();
    if (wait <= 0) return this.next(push.lane, lane);
    lane.timer = setTimeout(() => {
      lane.timer = undefined;
      this.next(push.lane, lane);
    }, wait);
    lane.timer.unref();
  }

  private next(key: string, lane: Lane<T>): void {
    const next = lane.waiting;
    if (!next) {
      this.lanes.delete(key);
      return;
    }
    lane.current = lane.last = next;
    lane.waiting = undefined;
    lane.startedAt = Date.now();
    this.on.start(next);
  }

  /** Before the current push is tried again: when a newer one waits, that one is made instead and true is answered. */
  replaced(push: T): boolean {
    const lane = this.lanes.get(push.lane);
    if (!lane || lane.current !== push || !lane.waiting) return false;
    this.on.superseded(push, lane.waiting);
    this.over(push);
    return true;
  }

  /** Forgets every lane (the node stops: what was not made stays unfinished in the outbox). */
  clear(): void {
    for (const lane of this.lanes.values()) clearTimeout(lane.timer);
    this.lanes.clear();
  }
}
