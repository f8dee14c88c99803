import type { RequestOptions } from './http.ts';
import type { Realtime } from './realtime.ts';
import type { Message, ThreadInbox, ThreadState } from './types.ts';

type Call = <T>(path: string, init?: Omit<RequestOptions, 'token'>) => Promise<T>;
const enc = encodeURIComponent;

/**
 * A message's thread (README, "Threads"): its replies, following it, reading it, and the user's
 * threads inbox. A reply itself is sent with `ChatClient.send(chatId, content, {parentId})`.
 * ChatClient delegates here.
 */
export class ThreadCalls {
  constructor(
    private readonly call: Call,
    /** The client's realtime connection (made after this object, so read when needed). */
    private readonly realtime: () => Realtime,
  ) {}

  /**
   * Opens a thread on the realtime connection: its replies and their changes come as
   * `thread.reply`, `message.edited`… while it is open, even when you do not follow it (a thread
   * you follow sends them anyway), and they are replayed after a reconnect, which opens it again.
   * Resolves with your state in it. At most 20 open (OPEN_THREAD_LIMIT_REACHED).
   */
  async open(chatId: string, parentId: string): Promise<ThreadState> {
    const rt = this.realtime();
    rt.threads.add(chatId, parentId);
    try {
      return (await rt.action<{ thread: ThreadState }>({ type: 'thread.open', chatId, parentId })).thread;
    } catch (error) {
      rt.threads.delete(chatId, parentId);
      throw error;
    }
  }

  /** Closes a thread `open` opened (at once when offline: the next connection does not open it). */
  async close(chatId: string, parentId: string): Promise<void> {
    const rt = this.realtime();
    rt.threads.delete(chatId, parentId);
    if (rt.status === 'open') await rt.action({ type: 'thread.close', chatId, parentId });
  }

  /** One page of a thread's replies, newest first; `lastReply` is the oldest id of the previous page. */
  async replies(chatId: string, parentId: string, page: { size?: number; lastReply?: string } = {}): Promise<Message[]> {
    return (await this.call<{ messages: Message[] }>(`api/chats/${enc(chatId)}/threads/${enc(parentId)}/messages`, { query: page })).messages;
  }

  /** Every reply of a thread, oldest first, read a page at a time. */
  async allReplies(chatId: string, parentId: string, pageSize = 100): Promise<Message[]> {
    const out: Message[] = [];
    let lastReply: string | undefined;
    for (;;) {
      const page = await this.replies(chatId, parentId, { size: pageSize, ...(lastReply ? { lastReply } : {}) });
      out.push(...page);
      if (page.length < pageSize) return out.reverse();
      lastReply = page[page.length - 1]!.messageId;
    }
  }

  /** Your state in a thread: following, read mark, unread replies and mentions. */
  state(chatId: string, parentId: string): Promise<ThreadState> {
    return this.call(`api/chats/${enc(chatId)}/threads/${enc(parentId)}`);
  }

  follow(chatId: string, parentId: string): Promise<ThreadState> {
    return this.call(`api/chats/${enc(chatId)}/threads/${enc(parentId)}/follow`, { method: 'PUT' });
  }

  /** Stop following: its replies no longer count for you (replying or being mentioned there follows it again). */
  unfollow(chatId: string, parentId: string): Promise<ThreadState> {
    return this.call(`api/chats/${enc(chatId)}/threads/${enc(parentId)}/follow`, { method: 'DELETE' });
  }

  /** Marks the thread read up to reply `seq` (its place in the thread); the chat's own mark is apart. */
  markRead(chatId: string, parentId: string, seq: number): Promise<ThreadState> {
    return this.call(`api/chats/${enc(chatId)}/threads/${enc(parentId)}/read`, { method: 'POST', body: { seq } });
  }

  /** Your threads inbox, newest activity first: pass the previous page's `nextCursor` as `cursor`. */
  inbox(page: { size?: number; cursor?: string; unread?: boolean } = {}): Promise<ThreadInbox> {
    const { unread, ...rest } = page;
    return this.call('api/users/me/threads', { query: { ...rest, ...(unread ? { unread: 'true' } : {}) } });
  }
}
