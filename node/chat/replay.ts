import type { ChatActor } from './actor.ts';
import type { ChangedMessage } from './message-reads.ts';
import { messageView } from './views.ts';

/** Where a client stands in one chat: the last seq it saw and, when it knows it, the last revision. */
export interface ResumePoint {
  seq: number;
  rev?: number;
  /** Threads of the chat the connection has open (their parents' ids): replayed as followed ones are. */
  threads?: string[];
}

/** Where a replay goes: one socket of one node. */
export interface ReplayTarget {
  nodeId: string;
  connId: string;
}

/** What a resuming client is told about one chat (its entry in the `resumed` frame). */
export interface ResumeEntry {
  fromSeq: number;
  toSeq: number;
  gap: boolean;
  toRev: number;
  stale: boolean;
}

export interface Replay {
  frames: object[];
  /** Null when the user is not (or no longer) a member: the chat is left out of `resumed`. */
  entry: ResumeEntry | null;
}

/**
 * Hands a replay to the socket it is for, synchronously: on this node straight to the waiting
 * socket, on another node through the chat's bus topic, in order with the chat's events.
 */
export type ReplayDelivery = (appId: string, chatId: string, to: ReplayTarget, replay: Replay) => void;

/** The newest state of each message among `lists`, in revision order. */
function latest(...lists: ChangedMessage[][]): ChangedMessage[] {
  const byId = new Map<string, ChangedMessage>();
  for (const c of lists.flat()) {
    const known = byId.get(c.message.messageId);
    if (!known || known.rev < c.rev) byId.set(c.message.messageId, c);
  }
  return [...byId.values()].sort((a, b) => a.rev - b.rev);
}

/**
 * What a reconnecting member missed in one chat, read in two steps so it is exact. The async step
 * reads the messages after the client's seq and, when it names a revision, the messages it had
 * seen that changed after that revision (memory or store). The returned `finish` is synchronous:
 * called in the same tick as the socket is subscribed to the chat, it adds what was published
 * during the reads. Events published after that tick arrive live; none before it do, so nothing
 * is missed and nothing is sent twice.
 *
 * New messages come as `message.new` (seq order), changed ones as `message.updated` (revision
 * order), then the replies sent or changed in their threads, of those the user follows or the
 * connection has open, as `thread.reply` (revision order),
 * all in their current state and with `replay: true`. When more than `limit` new messages
 * were missed the client gets `resume.gap` and pages history; when more than that many seen
 * messages changed, the entry says `stale` and the client reloads what it shows.
 */
export async function prepareReplay(actor: ChatActor, userId: string, point: ResumePoint, limit: number): Promise<() => Replay> {
  const chatId = actor.chatId;
  if (!actor.isMember(userId)) return () => ({ frames: [], entry: null });
  const reads = actor.reads;
  const read = await reads.since(point.seq, limit);
  const changed = point.rev === undefined ? undefined : await reads.changesSince(point.rev, limit);
  // The threads whose parents changed: their replies sent or changed since (thread-replies.ts).
  const replies = changed?.complete ? await actor.threads.replayOf(changed.changes.map((c) => c.message), { userId, open: point.threads ?? [] }, point.rev!, limit) : undefined;
  return () => {
    if (actor.status === 'gone' || !actor.isMember(userId)) return { frames: [], entry: null };
    const frames: object[] = [];
    const tail = reads.publishedSince(read.upTo);
    const changedTail = changed && reads.changesPublishedSince(changed.upToRev);
    const toSeq = actor.publishedSeq;
    const toRev = actor.publishedRev;
    const gap = !read.complete || tail === undefined || read.messages.length + tail.length > limit;
    if (gap) frames.push({ type: 'resume.gap', chatId, fromSeq: point.seq + 1, toSeq });
    else for (const m of reads.current([...read.messages, ...tail])) frames.push({ type: 'message.new', chatId, seq: m.seq, rev: m.rev, message: m.message, replay: true });
    let stale = false;
    if (changed) {
      stale = !changed.complete || changedTail === undefined;
      // Messages new to the client were just sent in their current state (or will be paged so).
      const updates = stale ? [] : latest(reads.current(changed.changes), changedTail!).filter((u) => u.seq <= point.seq);
      for (const u of updates) frames.push({ type: 'message.updated', chatId, seq: u.seq, rev: u.rev, message: u.message, replay: true });
      const missed = stale ? [] : replies?.();
      if (missed === undefined) stale = true;
      else for (const r of missed) frames.push({ type: 'thread.reply', chatId, parentId: r.parentId, seq: r.seq, rev: r.rev ?? 0, message: messageView(r, undefined), replay: true });
    }
    return { frames, entry: { fromSeq: point.seq + 1, toSeq, gap, toRev, stale } };
  };
}
