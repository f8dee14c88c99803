import { ChatApiError, ChatClient, ChatNetworkError, ChatTimeoutError, type ChatSummary, type ConnectionStatus, type Message } from '../../sdk/client.ts';
import { listUsers, saveSession, type DemoUser, type SignedIn } from './backend.ts';
import { OpenConversation } from './conversation-state.ts';
import { PushState } from './push-state.ts';
import { SearchState } from './search-state.ts';
import { InboxState, OpenThread } from './thread-state.ts';

/** How many users one presence query asks about (the service's limit). */
const PRESENCE_BATCH = 100;
/** Tries of a read mark that failed for a reason that passes (a refusal under load, a lost connection). */
const READ_MARK_TRIES = 6;

/**
 * Everything the signed-in page knows, kept current by the SDK's events: the chat list (names,
 * last message, unread counts), who is online, the open conversation, and the connection. Views
 * read it and call its methods; `subscribe` tells them when to render again.
 *
 * The wiring is the part worth copying: which event changes what is in `listen()`.
 */
export class ChatState {
  readonly client: ChatClient;
  chats: ChatSummary[] = [];
  listError: string | undefined;
  readonly online = new Set<string>();
  /** Display names by user id: the directory, direct chats' peers, and me. */
  readonly names = new Map<string, string>();
  /** People whose name was missing and asked for (a directory read each, at most). */
  private readonly askedNames = new Set<string>();
  directory: DemoUser[] = [];
  open: OpenConversation | undefined;
  /** The thread open beside the chat, if any. */
  thread: OpenThread | undefined;
  /** The threads inbox (README, "Threads"): the sidebar shows it instead of the chats when asked. */
  readonly inbox: InboxState;
  /** The sidebar's message search (README, "Search"). */
  readonly search: SearchState;
  /** This browser's push notifications and the chats' mute settings (README, "The reference app"). */
  readonly push: PushState;
  sidebar: 'chats' | 'threads' = 'chats';
  private chatsTimer: ReturnType<typeof setTimeout> | undefined;
  status: ConnectionStatus = 'idle';
  /** Shown for a moment after a reconnect: "back online". */
  reconnected = false;
  /** Set when the sign-in cannot be refreshed any more: the page asks to sign in again. */
  signedOut: string | undefined;
  private readonly listeners = new Set<() => void>();
  private notifying = false;
  private listLoad: Promise<void> | undefined;
  private listStale = false;
  private wasOffline = false;

  constructor(readonly me: SignedIn) {
    this.client = new ChatClient({
      baseUrl: me.baseUrl,
      onTokens: (tokens) => saveSession({ ...me, ...tokens }),
      onSignedOut: (error) => {
        this.signedOut = error instanceof Error ? error.message : 'the session ended';
        this.changed();
      },
    });
    this.client.setAuth(me);
    this.inbox = new InboxState(this.client, this.changed);
    this.search = new SearchState(this.client, this.changed);
    this.push = new PushState(this.client, this.changed, (chatId) => this.openKnownChat(chatId));
    this.names.set(me.userId, me.displayName);
    this.listen();
  }

  /** Connects, then loads the chat list (and who of its people is online) and the directory. */
  async start(): Promise<void> {
    await this.client.connect();
    await Promise.all([this.loadChats(), this.loadDirectory(), this.inbox.load()]);
    void this.push.check();
    const asked = this.push.chatFromAddress();
    if (asked) this.openKnownChat(asked);
  }

  /** Opens a chat a notification named, when it is one of mine (another tab may be another user). */
  private openKnownChat(chatId: string): void {
    if (this.chats.some((c) => c.chatId === chatId)) void this.openChat(chatId);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Renders once per task however many changes it brings. */
  changed = (): void => {
    if (this.notifying) return;
    this.notifying = true;
    queueMicrotask(() => {
      this.notifying = false;
      for (const listener of this.listeners) listener();
    });
  };

  /**
   * A person's display name. Someone who signed up after this page loaded its directory (a new
   * member of a group, the sender of a message) is looked up: the directory is read again, once
   * per unknown person, and the page shows the name when it comes.
   */
  nameOf(userId: string): string {
    const name = this.names.get(userId);
    if (name !== undefined) return name;
    if (!this.askedNames.has(userId)) {
      this.askedNames.add(userId);
      queueMicrotask(() => void this.loadDirectory());
    }
    return 'someone';
  }

  /** A chat's title: a group's name, a direct chat's peer. */
  titleOf(chat: ChatSummary): string {
    return chat.name ?? chat.peer?.displayName ?? 'Direct chat';
  }

  /**
   * Loads the chat list, then asks who of its people is online (a new chat brings new people). A
   * call while a load is in flight, or a message arriving meanwhile, makes that load run again when
   * it ends: a list read before a change never stays on the page.
   */
  loadChats(): Promise<void> {
    if (this.listLoad) {
      this.listStale = true;
      return this.listLoad;
    }
    this.listLoad = (async () => {
      do {
        this.listStale = false;
        await this.fetchChats();
      } while (this.listStale);
      this.listLoad = undefined;
      await this.queryPresence();
    })();
    return this.listLoad;
  }

  private async fetchChats(): Promise<void> {
    try {
      const chats: ChatSummary[] = [];
      for await (const chat of this.client.chats()) {
        chats.push(chat);
        if (chat.peer) this.names.set(chat.peer.userId, chat.peer.displayName);
      }
      this.chats = chats;
      this.listError = undefined;
    } catch (error) {
      this.listError = `Could not load your chats: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.changed();
  }

  async loadDirectory(): Promise<void> {
    try {
      this.directory = await listUsers();
      for (const u of this.directory) if (!this.names.has(u.userId)) this.names.set(u.userId, u.displayName);
      this.changed();
    } catch {
      // The directory only helps to pick people; the chats work without it.
    }
  }

  /** A snapshot of who is online among the people of my chats; events keep it current. */
  async queryPresence(): Promise<void> {
    const ids = [...new Set(this.chats.flatMap((c) => (c.peer ? [c.peer.userId] : [])).concat(this.open?.members.map((m) => m.userId) ?? []))].filter((id) => id !== this.me.userId);
    try {
      for (let i = 0; i < ids.length; i += PRESENCE_BATCH) {
        const batch = ids.slice(i, i + PRESENCE_BATCH);
        const online = new Set(await this.client.presence(batch));
        for (const id of batch) online.has(id) ? this.online.add(id) : this.online.delete(id);
      }
      this.changed();
    } catch {
      // Offline: the next connection asks again.
    }
  }

  /** Opens a chat: its newest page, its members, and its unread messages marked read. */
  async openChat(chatId: string): Promise<void> {
    if (this.open?.chatId === chatId) return;
    this.open?.close();
    const conversation = new OpenConversation(chatId, this.client, this.changed);
    this.open = conversation;
    this.changed();
    await conversation.load();
    if (this.open !== conversation) return;
    this.markRead(chatId);
    await this.queryPresence();
  }

  closeChat(): void {
    this.closeThread();
    this.open?.close();
    this.open = undefined;
    this.changed();
  }

  /** Opens a message's thread beside its chat (opening the chat first when another is open). */
  async openThread(chatId: string, parent: Message): Promise<void> {
    if (this.open?.chatId !== chatId) await this.openChat(chatId);
    this.thread?.close();
    const thread = new OpenThread(chatId, parent, this.client, this.changed);
    this.thread = thread;
    this.changed();
    await thread.load();
    this.inbox.refreshSoon();
    this.refreshChatsSoon();
  }

  closeThread(): void {
    this.thread?.close();
    this.thread = undefined;
    this.changed();
  }

  showSidebar(which: 'chats' | 'threads'): void {
    this.sidebar = which;
    if (which === 'threads') void this.inbox.load();
    this.changed();
  }

  /** Reads the chat list again soon (its thread unread counts moved): one read for a burst. */
  private refreshChatsSoon(): void {
    clearTimeout(this.chatsTimer);
    this.chatsTimer = setTimeout(() => void this.loadChats(), 300);
  }

  /** A thread event: the parent shown in the chat and in its open thread takes its new summary. */
  private threadMoved(chatId: string, parentId: string, thread: NonNullable<Message['thread']>): void {
    const shown = this.open?.chatId === chatId ? this.open.messages.find((m) => m.message.messageId === parentId) : undefined;
    if (shown) this.open!.upsert({ ...shown.message, thread });
    if (this.thread?.parentId === parentId) this.thread.parentChanged({ ...this.thread.parent, thread });
  }

  /** Marks the open chat read up to its newest message, when the reader can see it. */
  markRead(chatId: string): void {
    const chat = this.chats.find((c) => c.chatId === chatId);
    if (!chat || chat.unreadCount === 0 || document.visibilityState !== 'visible') return;
    const seq = chat.lastSeq;
    chat.unreadCount = 0;
    chat.mentionCount = 0;
    chat.readSeq = Math.max(chat.readSeq, seq);
    this.changed();
    this.sendReadMark(chatId, seq);
  }

  /**
   * Tells the service the chat is read up to `seq`. A refusal that passes (RATE_LIMITED under load,
   * a lost connection) is tried again after the wait the service asked for (else 1 s, doubling):
   * the page already shows the chat read, so a mark given up would leave the sender without its
   * "seen" and bring the unread count back on the next load.
   */
  private sendReadMark(chatId: string, seq: number, attempt = 1): void {
    this.client.markRead(chatId, seq).catch((e: unknown) => {
      const passing = e instanceof ChatApiError ? e.retryable : e instanceof ChatNetworkError || e instanceof ChatTimeoutError;
      if (!passing || attempt >= READ_MARK_TRIES) return;
      const waitMs = (e instanceof ChatApiError ? e.retryAfterMs : undefined) ?? 1000 * 2 ** (attempt - 1);
      setTimeout(() => this.sendReadMark(chatId, seq, attempt + 1), waitMs);
    });
  }

  /**
   * Starts (or finds) the direct chat with a user, or creates a group, and opens it. Resolves once
   * the chat exists: its history loads in the open conversation, which shows its own loading and
   * errors (`openChat` never rejects), so the form that asked is not held open by a slow load.
   */
  async createChat(kind: 'direct' | 'group', userIds: string[], name?: string): Promise<void> {
    const chat = kind === 'direct' ? await this.client.directChat(userIds[0]!) : await this.client.createGroup(name!, userIds);
    if (chat.peer) this.names.set(chat.peer.userId, chat.peer.displayName);
    if (!this.chats.some((c) => c.chatId === chat.chatId)) this.chats = [chat, ...this.chats];
    void this.openChat(chat.chatId);
  }

  signOut(): void {
    document.removeEventListener('visibilitychange', this.onVisible);
    clearTimeout(this.chatsTimer);
    this.inbox.close();
    this.push.close();
    this.thread?.close();
    this.open?.close();
    this.open = undefined;
    this.client.close();
    saveSession(undefined);
  }

  /** A message was stored in a chat: the list's order, last message and unread count follow. */
  private messageArrived(message: Message): void {
    if (this.listLoad) this.listStale = true;
    const chat = this.chats.find((c) => c.chatId === message.chatId);
    if (!chat) {
      // A chat I was just added to, or one from before the list loaded.
      void this.loadChats();
      return;
    }
    if (message.seq > chat.lastSeq) {
      chat.lastSeq = message.seq;
      chat.lastActivityAt = message.timeStamp;
      chat.lastMessage = message;
      // One's own message is never unread (the service moves the sender's read mark too).
      if (message.senderId === this.me.userId) {
        chat.readSeq = message.seq;
        chat.mentionCount = 0;
      } else if (message.mentions?.includes(this.me.userId)) {
        chat.mentionCount = Math.min(99, chat.mentionCount + 1);
      }
      chat.unreadCount = Math.max(0, chat.lastSeq - chat.readSeq);
      this.chats = [chat, ...this.chats.filter((c) => c !== chat)];
    }
    if (this.open?.chatId === message.chatId) {
      this.open.upsert(message);
      this.markRead(message.chatId);
    }
    this.changed();
  }

  /** An edit, delete, hide or restore: the open chat shows it, the list's last message follows. */
  private messageChanged(message: Message): void {
    const chat = this.chats.find((c) => c.chatId === message.chatId);
    if (chat?.lastMessage?.messageId === message.messageId) chat.lastMessage = message;
    // A reply kept in its thread is not in the chat's timeline.
    if (this.open?.chatId === message.chatId && (message.parentId === undefined || message.showInChat)) this.open.upsert(message);
    if (this.thread?.chatId === message.chatId) this.thread.upsert(message);
    this.changed();
  }

  private listen(): void {
    const c = this.client;
    c.on('status', (status) => {
      this.status = status;
      if (status === 'reconnecting') this.wasOffline = true;
      if (status === 'open' && this.wasOffline) {
        // Back: the SDK has resumed every chat; chats made meanwhile and presence need asking.
        this.wasOffline = false;
        this.reconnected = true;
        setTimeout(() => {
          this.reconnected = false;
          this.changed();
        }, 3000);
        void this.loadChats();
      }
      this.changed();
    });
    c.on('message.new', (e) => this.messageArrived(e.message));
    for (const type of ['message.edited', 'message.deleted', 'message.updated', 'message.hidden', 'message.restored'] as const) c.on(type, (e) => this.messageChanged(e.message));
    c.on('reaction.added', (e) => (this.open?.chatId === e.chatId && this.open.react(e.reaction, true), this.thread?.react(e.reaction, true)));
    c.on('reaction.removed', (e) => (this.open?.chatId === e.chatId && this.open.react(e.reaction, false), this.thread?.react(e.reaction, false)));
    c.on('thread.updated', (e) => this.threadMoved(e.chatId, e.parentId, e.thread));
    c.on('thread.reply', (e) => {
      if (this.thread?.chatId === e.chatId) this.thread.upsert(e.message);
      if (e.message.senderId !== this.me.userId) {
        this.inbox.refreshSoon();
        this.refreshChatsSoon();
      }
    });
    c.on('thread.read', () => {
      this.inbox.refreshSoon();
      this.refreshChatsSoon();
    });
    c.on('typing.started', (e) => this.open?.chatId === e.chatId && this.open.typingChanged(e.userId, true));
    c.on('typing.stopped', (e) => this.open?.chatId === e.chatId && this.open.typingChanged(e.userId, false));
    c.on('read.updated', (e) => {
      if (this.open?.chatId === e.chatId) this.open.readMoved(e.userId, e.seq);
      const chat = this.chats.find((x) => x.chatId === e.chatId);
      // My read mark moved on another device of mine.
      if (chat && e.userId === this.me.userId && e.seq > chat.readSeq) {
        chat.readSeq = e.seq;
        chat.unreadCount = Math.max(0, chat.lastSeq - e.seq);
        // Which mentions the mark passed is the service's to count: read again when some are left.
        if (chat.unreadCount === 0) chat.mentionCount = 0;
        else if (chat.mentionCount > 0) void this.loadChats();
        this.changed();
      }
    });
    c.on('membership.changed', (e) => {
      if (e.userId === this.me.userId && e.change === 'removed') {
        this.chats = this.chats.filter((x) => x.chatId !== e.chatId);
        if (this.open?.chatId === e.chatId) this.closeChat();
      } else if (this.open?.chatId === e.chatId) void this.open.load();
      void this.loadChats();
    });
    c.on('chat.updated', (e) => {
      const chat = this.chats.find((x) => x.chatId === e.chatId);
      if (chat && e.chat.name) chat.name = e.chat.name;
      this.changed();
    });
    c.on('chat.deleted', (e) => {
      this.chats = this.chats.filter((x) => x.chatId !== e.chatId);
      if (this.open?.chatId === e.chatId) this.closeChat();
      this.changed();
    });
    for (const type of ['message.pinned', 'message.unpinned'] as const) c.on(type, (e) => void (this.open?.chatId === e.chatId ? this.open.pinsChanged() : undefined));
    c.on('chat.stale', (e) => void (this.open?.chatId === e.chatId ? this.open.load() : undefined));
    c.on('presence.online', (e) => {
      this.online.add(e.userId);
      this.changed();
    });
    c.on('presence.offline', (e) => {
      this.online.delete(e.userId);
      this.changed();
    });
    document.addEventListener('visibilitychange', this.onVisible);
  }

  /** Coming back to the tab reads what arrived in the open chat while it was hidden. */
  private readonly onVisible = (): void => {
    if (this.open) this.markRead(this.open.chatId);
    this.thread?.markRead();
  };
}
