import { ApiError } from '../../common/errors/index.ts';
import type { ChatStore } from '../store/index.ts';

/**
 * The most chats one user may be in (USER_CHATS_MAX): what bounds every per-user cost that grows
 * with a user's chats (subscribing a socket to them, deleting the user). Checked before each
 * membership is made, for every user it adds (the creator of a chat and everyone it adds), against
 * the store's count; joins made at the same moment may pass it by as many as are in flight.
 */
export class ChatCap {
  constructor(
    private readonly chats: ChatStore,
    readonly max: number,
  ) {}

  /** CHAT_LIMIT_REACHED naming the first of `userIds` already in `max` chats, if any. */
  async check(appId: string, userIds: string[]): Promise<ApiError | undefined> {
    const counts = await this.chats.chatCounts(appId, userIds);
    for (const userId of userIds) {
      if ((counts.get(userId) ?? 0) < this.max) continue;
      // A count can drift after a failed write: a user is counted again before being refused.
      if ((await this.chats.recountChats(appId, userId)) < this.max) continue;
      return new ApiError('CHAT_LIMIT_REACHED', `user ${userId} is already in ${this.max} chats, the most one user may be in`);
    }
    return undefined;
  }
}
