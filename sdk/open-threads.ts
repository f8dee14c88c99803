/**
 * The threads a realtime connection has open (README, "Threads": `thread.open`), kept across
 * reconnects: those of chats the reconnect resumes are named in its URL (`?threads=`), so the
 * server opens them with the chat and replays their missed replies; the others are opened again
 * once the connection is ready.
 */
export class OpenThreads {
  /** `chatId:parentId`, as the connect URL names them. */
  private readonly open = new Set<string>();

  add(chatId: string, parentId: string): void {
    this.open.add(`${chatId}:${parentId}`);
  }

  delete(chatId: string, parentId: string): void {
    this.open.delete(`${chatId}:${parentId}`);
  }

  /** The `threads` URL parameter for a connection resuming `resumed` chats (empty when none). */
  param(resumed: ReadonlySet<string>): string {
    return [...this.open].filter((key) => resumed.has(key.slice(0, key.indexOf(':')))).join(',');
  }

  /** Threads to open with `thread.open` on a connection that resumed `resumed` chats. */
  rest(resumed: ReadonlySet<string>): { chatId: string; parentId: string }[] {
    return [...this.open].flatMap((key) => {
      const [chatId, parentId] = key.split(':') as [string, string];
      return resumed.has(chatId) ? [] : [{ chatId, parentId }];
    });
  }
}
