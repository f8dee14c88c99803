/**
 * Paces the moves of one chat in its members' chat lists (the activity index). A chat's activity
 * write (chat-activity.ts) rewrites its row at most once a second; moving it in the lists as well
 * costs a row per member, which for a busy group is most of what the store writes: on the
 * replicated cluster bench (12 chats of 24 members) the moves were 2,000 of Cassandra's 2,400
 * replica writes a second at 100 msgs/s. So a write moves the lists only when `stepMs` has passed
 * since the last move:
 * - a chat that was quiet for `stepMs` moves at its next write: it rises to the top of its members'
 *   lists within a write of its first new message;
 * - a chat that stays busy moves at most once per `stepMs`, and a write that could not move asks for
 *   one more write when the move is due, so the lists catch up with its latest activity at most
 *   `stepMs` (and a write) after it;
 * - `forceNext` makes the next write move whatever the time (an actor that stops hands over lists
 *   that agree with its row, which the next owner assumes when it loads).
 * Within a page a list is ordered by the chats' current summaries (ChatService.list), so the index
 * trailing by at most `stepMs` only matters across pages: between chats that were all active
 * within `stepMs` of each other.
 */
export class ListMoves {
  private lastMove = -Infinity;
  private forced = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly stepMs: number,
    /** Asks for one more activity write (it moves the lists, being due then). */
    private readonly again: () => void,
  ) {}

  /** Whether the write starting now moves the lists; when it does not, one more write comes when it may. */
  due(): boolean {
    const now = performance.now();
    const wait = this.lastMove + this.stepMs - now;
    if (wait <= 0 || this.forced) {
      this.forced = false;
      this.lastMove = now;
      return true;
    }
    if (!this.timer && !this.stopped) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.stopped) this.again();
      }, Math.ceil(wait));
      this.timer.unref();
    }
    return false;
  }

  /** A write that `due` let move failed: the next write moves (it is tried again by the writer). */
  failed(): void {
    this.lastMove = -Infinity;
  }

  forceNext(): void {
    this.forced = true;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
