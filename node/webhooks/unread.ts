import type { MessageView } from '../chat/index.ts';

interface Pending {
  appId: string;
  chatId: string;
  userId: string;
  messages: number;
  lastSeq: number;
  lastMessage: MessageView;
  /** Whether a message of the window mentions the user. */
  mentioned: boolean;
  timer: NodeJS.Timeout;
}

/** Users waiting for their `message.unread`, at most; beyond it new ones are not coalesced but sent at once. */
const MAX_WAITING = 100_000;

/**
 * `message.unread`: for a member with no live connection when a message arrives, one event per
 * user and chat per window (WEBHOOK_UNREAD_WINDOW_SECONDS): the first message opens the window,
 * and when it closes one event carries how many messages came in it, the newest, and the member's
 * unread count then, and whether any of them mentioned the user. Kept in memory on the chat's owner: a crash within a window loses that
 * window's event (the messages themselves each have their `message.new`).
 */
export class UnreadCoalescer {
  private readonly waiting = new Map<string, Pending>();

  constructor(
    private readonly windowMs: number,
    private readonly emit: (p: { appId: string; chatId: string; userId: string; messages: number; lastSeq: number; lastMessage: MessageView; mentioned: boolean }) => unknown,
  ) {}

  /** A message for `userId`, who had no live connection when it arrived. */
  add(appId: string, chatId: string, userId: string, message: MessageView): void {
    const key = `${appId}/${chatId}/${userId}`;
    const found = this.waiting.get(key);
    const mentioned = message.mentions?.includes(userId) ?? false;
    if (found) {
      found.messages++;
      found.mentioned ||= mentioned;
      if (message.seq > found.lastSeq) {
        found.lastSeq = message.seq;
        found.lastMessage = message;
      }
      return;
    }
    const p: Pending = { appId, chatId, userId, messages: 1, lastSeq: message.seq, lastMessage: message, mentioned, timer: undefined as unknown as NodeJS.Timeout };
    if (this.waiting.size >= MAX_WAITING) {
      this.fire(key, p);
      return;
    }
    p.timer = setTimeout(() => this.fire(key, p), this.windowMs);
    p.timer.unref();
    this.waiting.set(key, p);
  }

  private fire(key: string, p: Pending): unknown {
    this.waiting.delete(key);
    const { appId, chatId, userId, messages, lastSeq, lastMessage, mentioned } = p;
    return this.emit({ appId, chatId, userId, messages, lastSeq, lastMessage, mentioned });
  }

  /** Sends every open window's event now (shutdown); resolves once they are in the outbox. */
  async flush(): Promise<void> {
    const fired: unknown[] = [];
    for (const [key, p] of [...this.waiting]) {
      clearTimeout(p.timer);
      fired.push(this.fire(key, p));
    }
    await Promise.all(fired);
  }
}
