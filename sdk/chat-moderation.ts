import type { RequestOptions } from './http.ts';
import type { ChatBan, Mute } from './types.ts';

type Call = <T>(path: string, init?: Omit<RequestOptions, 'token'>) => Promise<T>;
const at = (chatId: string, rest: string) => `api/chats/${encodeURIComponent(chatId)}/${rest}`;

/**
 * Mutes and bans in a chat (README, "Moderation"): one set of routes that the backend calls with
 * its API key and a group's owner or admin with its JWT, so `ChatServer` and `ChatClient` both
 * delegate here.
 */
export class ChatModerationCalls {
  constructor(private readonly call: Call) {}

  muteMember(chatId: string, input: { userId: string; expiresAt?: string }): Promise<Mute> {
    return this.call(at(chatId, 'mutes'), { method: 'POST', body: input });
  }

  async unmuteMember(chatId: string, userId: string): Promise<void> {
    await this.call(at(chatId, `mutes/${encodeURIComponent(userId)}`), { method: 'DELETE' });
  }

  async listMutes(chatId: string): Promise<Mute[]> {
    return (await this.call<{ mutes: Mute[] }>(at(chatId, 'mutes'))).mutes;
  }

  banMember(chatId: string, input: { userId: string; reason?: string; expiresAt?: string }): Promise<ChatBan> {
    return this.call(at(chatId, 'bans'), { method: 'POST', body: input });
  }

  async unbanMember(chatId: string, userId: string): Promise<void> {
    await this.call(at(chatId, `bans/${encodeURIComponent(userId)}`), { method: 'DELETE' });
  }

  listChatBans(chatId: string, page: { size?: number; cursor?: string } = {}): Promise<{ bans: ChatBan[]; nextCursor?: string }> {
    return this.call(at(chatId, 'bans'), { query: page });
  }
}
