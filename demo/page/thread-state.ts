import { applyReaction, type ChatClient, type Message, type Reaction, type ThreadInbox } from '../../sdk/client.ts';
import { describe } from './conversation-state.ts';

/** Replies a thread page asks for. */
const PAGE_SIZE = 50;


/**
 * The thread that is open beside its chat (README, "Threads"): its parent, its replies (the
 * newest page, older ones on demand), and a reply box. Replies arriving live are put in their
 * place; the thread is marked read up to the newest reply shown while the page is visible.
 */
export class OpenThread {
  /** Ascending by their seq in the thread. */
  replies: Message[] = [];
  complete = false;
  error: string | undefined;
  sending = false;
  /** The file being uploaded for a reply, while it is. */
  uploading: { name: string; sent: number; total: number } | undefined;
  private closed = false;
  private readMark = 0;

  constructor(
    readonly chatId: string,
    public parent: Message,
    private readonly client: ChatClient,
    private readonly changed: () => void,
  ) {}

  get parentId(): string {
    return this.parent.messageId;
  }

  async load(): Promise<void> {
    // Open on the connection first, so its replies come live whether or not this user follows it
    // (the page loaded next holds those that came before); offline, it opens with the next connection.
    void this.client.threads.open(this.chatId, this.parentId).catch(() => undefined);
    try {
      const page = await this.client.threads.replies(this.chatId, this.parentId, { size: PAGE_SIZE });
      if (this.closed) return;
      const known = new Map(this.replies.map((r) => [r.messageId, r]));
      for (const r of page) known.set(r.messageId, r);
      this.replies = [...known.values()].sort((a, b) => a.seq - b.seq);
      this.complete = page.length < PAGE_SIZE;
      this.error = undefined;
      this.markRead();
    } catch (error) {
      this.error = `Could not load this thread: ${describe(error)}`;
    }
    this.changed();
  }

  async loadOlder(): Promise<void> {
    const oldest = this.replies[0];
    if (this.complete || !oldest) return;
    try {
      const page = await this.client.threads.replies(this.chatId, this.parentId, { size: PAGE_SIZE, lastReply: oldest.messageId });
      this.replies = [...page.reverse(), ...this.replies];
      this.complete = page.length < PAGE_SIZE;
    } catch (error) {
      this.error = `Could not load older replies: ${describe(error)}`;
    }
    this.changed();
  }

  /** A reply as stored (an ack or an event, new or changed): replaces its copy, or takes its place. */
  upsert(reply: Message): void {
    if (reply.parentId !== this.parentId) return;
    const at = this.replies.findIndex((r) => r.messageId === reply.messageId);
    if (at >= 0) this.replies[at] = reply;
    else if (reply.seq > (this.replies.at(-1)?.seq ?? 0)) this.replies.push(reply);
    else this.replies = [...this.replies, reply].sort((a, b) => a.seq - b.seq);
    this.replies = [...this.replies];
    this.markRead();
    this.changed();
  }

  /** A reaction event on one of its replies. */
  react(reaction: Reaction, added: boolean): void {
    const at = this.replies.findIndex((r) => r.messageId === reaction.messageId);
    if (at < 0) return;
    this.replies[at] = applyReaction(this.replies[at]!, reaction, added, this.client.userId);
    this.replies = [...this.replies];
    this.changed();
  }

  /** The parent's new state (its summary after a reply, an edit). */
  parentChanged(parent: Message): void {
    this.parent = parent;
    this.changed();
  }

  /** Uploads a file, then sends it as a reply of its own (README, "Attachments"), the upload's progress shown meanwhile. */
  async sendFile(file: File, showInChat: boolean): Promise<void> {
    this.uploading = { name: file.name, sent: 0, total: file.size };
    this.changed();
    try {
      const attachment = await this.client.uploadFile(this.chatId, file, {
        onProgress: (sent, total) => {
          this.uploading = { name: file.name, sent, total };
          this.changed();
        },
      });
      this.uploading = undefined;
      this.upsert(await this.client.send(this.chatId, '', { parentId: this.parentId, attachments: [attachment.id], ...(showInChat ? { showInChat } : {}) }));
      this.error = undefined;
    } catch (error) {
      this.error = `${file.name} not sent: ${describe(error)}`;
    } finally {
      this.uploading = undefined;
      this.changed();
    }
  }

  async send(content: string, showInChat: boolean): Promise<boolean> {
    this.sending = true;
    this.changed();
    try {
      this.upsert(await this.client.send(this.chatId, content, { parentId: this.parentId, ...(showInChat ? { showInChat } : {}) }));
      this.error = undefined;
      return true;
    } catch (error) {
      this.error = `Not sent: ${describe(error)}`;
      return false;
    } finally {
      this.sending = false;
      this.changed();
    }
  }

  /** Marks the thread read up to its newest reply shown, when the reader can see it. */
  markRead(): void {
    const newest = this.replies.at(-1)?.seq ?? 0;
    if (this.closed || newest <= this.readMark || document.visibilityState !== 'visible') return;
    this.readMark = newest;
    void this.client.threads.markRead(this.chatId, this.parentId, newest).catch(() => (this.readMark = 0));
  }

  close(): void {
    this.closed = true;
    void this.client.threads.close(this.chatId, this.parentId).catch(() => undefined);
  }
}

/** The threads inbox as the page shows it: the first page, and the count of threads with unread replies. */
export class InboxState {
  page: ThreadInbox | undefined;
  error: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: ChatClient,
    private readonly changed: () => void,
  ) {}

  get unreadThreads(): number {
    return this.page?.unreadThreads ?? 0;
  }

  async load(): Promise<void> {
    try {
      this.page = await this.client.threads.inbox({ size: 30 });
      this.error = undefined;
    } catch (error) {
      this.error = `Could not load your threads: ${describe(error)}`;
    }
    this.changed();
  }

  /** Reads it again soon: replies and read marks come in bursts, one read serves them all. */
  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.load(), 250);
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
