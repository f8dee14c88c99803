import { applyReaction, type AttachmentUrls, type ChatClient, type Member, type Message, type Pinned, type Reaction } from '../../sdk/client.ts';

/** Messages a history page asks for: a screenful and a half, so the first page can be scrolled. */
export const PAGE_SIZE = 30;
/** A typing indicator whose `typing.stopped` never came (the typist's connection dropped) goes after this. */
const TYPING_TIMEOUT_MS = 8000;

/** A message as the page shows it: stored, or on its way, or refused with the reason. */
export interface ShownMessage {
  message: Message;
  /** A send not yet acknowledged (`sending`, also while offline: the SDK queues it) or refused (`failed`). */
  pending?: 'sending' | 'failed';
  /** Why the last action on this message failed, shown under it. */
  error?: string;
  /** A send's idempotency key: Retry re-sends with it, so a send that did land is not doubled. */
  idempotencyKey?: string;
  /** A file being sent: its bytes go first (`sent` of `total`), then the message that carries it. */
  upload?: { name: string; sent: number; total: number };
  /** The file of a file send, kept so Retry can send it again. */
  file?: File;
  /** A refused file send that sending again cannot change (too large, a type not accepted): no Retry. */
  final?: boolean;
}

/** Signed URLs live 5 minutes: a copy is used for 4 (and a link shown with one is refreshed past that). */
export const URLS_REUSE_MS = 4 * 60_000;

/** A send's idempotency key: random, 32 hex digits (`randomUUID` exists only on https and localhost). */
const newKey = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

/** What went wrong, in the service's words when it said (a problem's `detail`), else the error's. */
export const describe = (error: unknown): string => {
  const detail = (error as { problem?: { detail?: unknown } } | undefined)?.problem?.detail;
  return typeof detail === 'string' ? detail : error instanceof Error ? error.message : String(error);
};

/**
 * The chat that is open: its messages (newest page first, older pages loaded as the reader scrolls
 * up), its members and their read marks (for "seen by"), and who is typing. It changes only
 * through these methods; each calls `changed()` so the page re-renders.
 */
export class OpenConversation {
  /** Ascending by seq; sends on their way at the end. */
  messages: ShownMessage[] = [];
  /** The first message of the chat is loaded: no older page to ask for. */
  complete = false;
  loadingOlder = false;
  /** Why the chat or an older page could not be loaded. */
  error: string | undefined;
  members: Member[] = [];
  /** The chat's pinned messages, the newest pin first (loaded with the chat, again at each pin event). */
  pins: Pinned[] = [];
  readonly typing = new Map<string, ReturnType<typeof setTimeout>>();
  /** Counts pages put in front, so the view keeps the reader's place when one arrives. */
  prepended = 0;
  private closed = false;
  /**
   * What arrived (a message, a reaction, a read mark) while a load was in flight, numbered: a
   * load's answer was read at some point after it began, maybe before these, so each is applied
   * again on top of it. Kept only while a load is in flight.
   */
  private arrived: { n: number; apply: () => void }[] = [];
  private arrivedCount = 0;
  private loading = 0;

  constructor(
    readonly chatId: string,
    private readonly client: ChatClient,
    private readonly changed: () => void,
  ) {}

  /**
   * Loads the newest page and the members. Also after `chat.stale`: what is shown is replaced by
   * the answer, then what arrived while it was on its way is applied again on top (see `arrived`).
   */
  async load(): Promise<void> {
    this.error = undefined;
    const since = this.arrivedCount;
    this.loading++;
    try {
      const [page, members, pins] = await Promise.all([this.client.getMessages(this.chatId, { size: PAGE_SIZE }), this.client.members(this.chatId), this.client.pins(this.chatId)]);
      if (this.closed) return;
      this.pins = pins;
      const pending = this.messages.filter((m) => m.pending);
      this.messages = [...page.reverse().map((message) => ({ message })), ...pending];
      this.complete = page.length < PAGE_SIZE;
      this.members = members;
      // Each is idempotent (a message replaces its copy, a mark only moves forward), so one the
      // answer already held changes nothing.
      for (const change of this.arrived) if (change.n > since) change.apply();
    } catch (error) {
      this.error = `Could not load this chat: ${describe(error)}`;
    } finally {
      if (--this.loading === 0) this.arrived = [];
    }
    this.changed();
  }

  /** Applies a change that arrived, and keeps it for the loads in flight (see `arrived`). */
  private arrive(apply: () => void): void {
    apply();
    if (this.loading > 0) this.arrived.push({ n: ++this.arrivedCount, apply });
  }

  /** The page before the oldest message shown; nothing when one is on its way or none is left. */
  async loadOlder(): Promise<void> {
    const oldest = this.messages.find((m) => !m.pending)?.message;
    if (this.loadingOlder || this.complete || !oldest) return;
    this.loadingOlder = true;
    this.changed();
    try {
      const page = await this.client.getMessages(this.chatId, { size: PAGE_SIZE, lastMessage: oldest.messageId });
      if (this.closed) return;
      const shown = new Set(this.messages.map((m) => m.message.messageId));
      this.messages = [...page.filter((m) => !shown.has(m.messageId)).reverse().map((message) => ({ message })), ...this.messages];
      this.complete = page.length < PAGE_SIZE;
      this.prepended++;
      this.error = undefined;
    } catch (error) {
      this.error = `Could not load older messages: ${describe(error)}`;
    } finally {
      this.loadingOlder = false;
      this.changed();
    }
  }

  /** A message as stored (an ack or an event): replaces the shown one, or takes its place in seq order. */
  upsert(message: Message): void {
    this.arrive(() => this.place(message));
  }

  private place(message: Message): void {
    const at = this.messages.findIndex((m) => m.message.messageId === message.messageId);
    if (at >= 0) {
      // An event's copy does not say which reactions are mine (every member shares it): keep what we knew.
      const known = this.messages[at]!.message.ownReactions;
      this.messages[at] = { message: message.ownReactions === undefined && known !== undefined && !message.deleted ? { ...message, ownReactions: known } : message };
    } else {
      // Older than the oldest page loaded: it will come with that page.
      const first = this.messages.find((m) => !m.pending)?.message;
      if (first && message.seq < first.seq && !this.complete) return;
      const index = this.messages.findIndex((m) => m.pending || m.message.seq > message.seq);
      this.messages.splice(index < 0 ? this.messages.length : index, 0, { message });
    }
    this.changed();
  }

  /** A reaction event: the message's reactions change without a new copy of the message. */
  react(reaction: Reaction, added: boolean): void {
    this.arrive(() => this.reactNow(reaction, added));
  }

  private reactNow(reaction: Reaction, added: boolean): void {
    const shown = this.messages.find((m) => m.message.messageId === reaction.messageId);
    if (!shown) return;
    shown.message = applyReaction(shown.message, reaction, added, this.client.userId);
    this.changed();
  }

  /**
   * Sends `content` (a reply when `replyTo` is given): shown at once as sending, replaced by the
   * stored message when the service acknowledges it (the SDK holds it while offline and sends it
   * after the reconnect), or marked failed with the reason and a way to retry.
   */
  async send(me: string, content: string, replyTo?: Message, idempotencyKey: string = newKey(), mentions: string[] = []): Promise<void> {
    const placeholder: ShownMessage = {
      pending: 'sending',
      idempotencyKey,
      message: {
        chatId: this.chatId,
        messageId: `pending:${idempotencyKey}`,
        senderId: me,
        content,
        timeStamp: new Date().toISOString(),
        edited: false,
        seq: Number.MAX_SAFE_INTEGER,
        deleted: false,
        reactions: [],
        reactionCounts: {},
        type: 'regular',
        ...(replyTo ? { replyTo } : {}),
        ...(mentions.length ? { mentions } : {}),
      },
    };
    this.messages = [...this.messages.filter((m) => m.idempotencyKey !== idempotencyKey), placeholder];
    this.changed();
    try {
      const stored = await this.client.send(this.chatId, content, { idempotencyKey, ...(replyTo ? { replyTo: replyTo.messageId } : {}), ...(mentions.length ? { mentions } : {}) });
      this.messages = this.messages.filter((m) => m !== placeholder);
      this.upsert(stored);
    } catch (error) {
      placeholder.pending = 'failed';
      placeholder.error = describe(error);
      this.messages = [...this.messages];
      this.changed();
    }
  }

  /**
   * Sends a file: a placeholder shows the upload's progress, then the message that carries it
   * replaces it, as a text send's does; a refused file (too large, a type not accepted) is marked
   * failed with the service's reason.
   */
  async sendFile(me: string, file: File, idempotencyKey: string = newKey()): Promise<void> {
    const placeholder: ShownMessage = {
      pending: 'sending',
      idempotencyKey,
      file,
      upload: { name: file.name, sent: 0, total: file.size },
      message: { chatId: this.chatId, messageId: `pending:${idempotencyKey}`, senderId: me, content: '', timeStamp: new Date().toISOString(), edited: false, seq: Number.MAX_SAFE_INTEGER, deleted: false, reactions: [], reactionCounts: {}, type: 'regular' },
    };
    this.messages = [...this.messages.filter((m) => m.idempotencyKey !== idempotencyKey), placeholder];
    this.changed();
    try {
      const attachment = await this.client.uploadFile(this.chatId, file, {
        onProgress: (sent, total) => {
          placeholder.upload = { name: file.name, sent, total };
          this.messages = [...this.messages];
          this.changed();
        },
      });
      placeholder.upload = undefined;
      const stored = await this.client.send(this.chatId, '', { idempotencyKey, attachments: [attachment.id] });
      this.messages = this.messages.filter((m) => m !== placeholder);
      this.upsert(stored);
    } catch (error) {
      placeholder.pending = 'failed';
      placeholder.upload = undefined;
      placeholder.error = describe(error);
      placeholder.final = (error as { retryable?: unknown } | undefined)?.retryable === false;
      this.messages = [...this.messages];
      this.changed();
    }
  }

  private readonly urls = new Map<string, { at: number; urls: Promise<AttachmentUrls> }>();

  /** Signed URLs of an attachment of this chat, asked once per few minutes. */
  attachmentUrls(attachmentId: string): Promise<AttachmentUrls> {
    const known = this.urls.get(attachmentId);
    if (known && Date.now() - known.at < URLS_REUSE_MS) return known.urls;
    const urls = this.client.attachmentUrls(this.chatId, attachmentId);
    this.urls.set(attachmentId, { at: Date.now(), urls });
    urls.catch(() => this.urls.delete(attachmentId));
    return urls;
  }

  /** Takes a failed send off the page. */
  discard(shown: ShownMessage): void {
    this.messages = this.messages.filter((m) => m !== shown);
    this.changed();
  }

  /** Runs an edit, delete, react or unreact: the stored message replaces the shown one, a refusal is shown under it. */
  async act(messageId: string, action: () => Promise<Message>): Promise<boolean> {
    const shown = () => this.messages.find((m) => m.message.messageId === messageId);
    try {
      const stored = await action();
      const current = shown();
      if (current) current.error = undefined;
      this.upsert(stored);
      return true;
    } catch (error) {
      const current = shown();
      if (current) current.error = describe(error);
      this.messages = [...this.messages];
      this.changed();
      return false;
    }
  }

  /** A pin event: the list is read again (at most 50 pins, each with its message as it is now). */
  async pinsChanged(): Promise<void> {
    try {
      const pins = await this.client.pins(this.chatId);
      if (this.closed) return;
      this.pins = pins;
      this.changed();
    } catch {
      // The next pin event, or opening the chat again, reads them.
    }
  }

  /** Pins or unpins a message; a refusal is shown under it, as other actions' are. */
  async pin(messageId: string, add: boolean): Promise<void> {
    const shown = this.messages.find((m) => m.message.messageId === messageId);
    try {
      await (add ? this.client.pin(this.chatId, messageId) : this.client.unpin(this.chatId, messageId));
      await this.pinsChanged();
    } catch (error) {
      if (shown) shown.error = describe(error);
      this.messages = [...this.messages];
      this.changed();
    }
  }

  readMoved(userId: string, seq: number): void {
    this.arrive(() => {
      this.members = this.members.map((m) => (m.userId === userId ? { ...m, readSeq: Math.max(m.readSeq, seq) } : m));
      this.changed();
    });
  }

  typingChanged(userId: string, started: boolean): void {
    clearTimeout(this.typing.get(userId));
    this.typing.delete(userId);
    if (started) {
      this.typing.set(
        userId,
        setTimeout(() => this.typingChanged(userId, false), TYPING_TIMEOUT_MS),
      );
    }
    this.changed();
  }

  close(): void {
    this.closed = true;
    for (const timer of this.typing.values()) clearTimeout(timer);
  }
}
