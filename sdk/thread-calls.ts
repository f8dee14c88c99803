import type { RequestOptions } from './http.ts';
import type { Message, ThreadInbox, ThreadState } from './types.ts';

type Call = <T>(path: string, init?: Omit<RequestOptions, 'token'>) => Promise<T>;
const enc = encodeURIComponent;

/**
 * A message's thread (README, "Threads"): its replies, following it, reading it, and the user's
 * threads inbox. A reply itself is sent with `ChatClient.send(chatId, content, {parentId})`.
 * ChatClient delegates here.
 */
export class ThreadCalls {
  constructor(private readonly call: Call) {}

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
