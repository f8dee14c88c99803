import type { Member, NodeStore } from '../store/index.ts';
import { ChatActivity } from './chat-activity.ts';

export interface SenderReadsDeps {
  appId: string;
  chatId: string;
  store: NodeStore;
  /** The actor's members as it holds them now. */
  members: ReadonlyMap<string, Member>;
  /** Runs the write in the actor's queue, after every operation queued before it. */
  run: (op: () => Promise<void>) => Promise<unknown>;
}

/**
 * One's own message is never unread: as a message becomes durable, the chat's actor moves its
 * sender's read mark to it, in memory (what chat lists read from a loaded actor), and this writes
 * the moved marks behind: at most one statement per chat per interval, for every sender since the
 * last, so a send costs no write of its own. The write runs in the actor's queue, serialized with
 * `markRead` and membership changes, and carries each member's mark as the actor holds it then,
 * never lower than stored. No `read.updated` event is sent for it: every member gets the message,
 * and with it the news that its sender has read it.
 *
 * Guarantee: a mark is written within the interval, retried after a failed write; a node ending
 * abruptly loses at most the marks of its last interval (the sender's own latest messages count as
 * unread until its next send or read).
 */
export class SenderReads {
  private readonly pending = new Set<string>();
  private readonly writer: ChatActivity;

  constructor(
    private readonly deps: SenderReadsDeps,
    intervalMs: number,
  ) {
    this.writer = new ChatActivity(() => this.deps.run(() => this.write()), intervalMs);
  }

  /** The sender's message with `seq` is durable: its mark moves there (never back). */
  sent(userId: string, seq: number): void {
    const member = this.deps.members.get(userId);
    if (!member || member.readSeq >= seq) return;
    member.readSeq = seq;
    this.pending.add(userId);
    this.writer.touch();
  }

  /** Writes what is pending now and waits for it. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  stop(): void {
    this.writer.stop();
  }

  private async write(): Promise<void> {
    const ids = [...this.pending];
    this.pending.clear();
    const marks = ids.flatMap((userId) => {
      const member = this.deps.members.get(userId);
      return member ? [{ userId, seq: member.readSeq }] : [];
    });
    try {
      await this.deps.store.chats.writeReadMarks(this.deps.appId, this.deps.chatId, marks);
    } catch (error) {
      for (const id of ids) this.pending.add(id);
      throw error;
    }
  }
}
