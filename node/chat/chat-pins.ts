import Type, { type Static } from 'typebox';
import { ApiError } from '../../common/index.ts';
import type { Chat, MemberRole, StoredMessage, StoredPin } from '../store/index.ts';
import { CHAT_LIMITS } from './limits.ts';
import { MessageSchema } from './schemas.ts';

/**
 * Pinned messages (README, "Pins"): the rules of pinning, as pure functions of the chat's state.
 * The chat's actor applies one in its serial queue and writes the chat row that carries the pins;
 * a chat holds at most CHAT_LIMITS.pins, so the row stays small.
 */
const Uuid = Type.String({ format: 'uuid' });
export const PinSchema = Type.Object({ messageId: Uuid, pinnedBy: Uuid, pinnedAt: Type.String({ format: 'date-time' }) });
export const PinnedSchema = Type.Object({ ...PinSchema.properties, message: MessageSchema }, { description: 'A pin with the message as it is now' });
export type PinnedView = Static<typeof PinnedSchema>;

/** A change of the pins: the chat's next state and the pin made or removed; `undefined` chat: nothing changes. */
export type PinChange = ApiError | { chat: Chat | undefined; pin: StoredPin };

/** Who may pin: a group's owners and admins, either member of a direct chat. */
function mayPin(chat: Chat, role: MemberRole): ApiError | undefined {
  return chat.kind === 'group' && role === 'member' ? new ApiError('NOT_ALLOWED', "only a group's owners and admins pin and unpin messages") : undefined;
}

/** Pins a message of the chat (once: pinning it again changes nothing); never a deleted one, nor past the limit. */
export function pinning(chat: Chat, role: MemberRole, userId: string, m: StoredMessage | undefined, at: string): PinChange {
  const refused = mayPin(chat, role);
  if (refused) return refused;
  if (!m) return new ApiError('MESSAGE_NOT_FOUND', 'no such message in this chat');
  if (m.deletedAt !== undefined) return new ApiError('MESSAGE_DELETED', 'a deleted message cannot be pinned');
  const pins = chat.pins ?? [];
  const existing = pins.find((p) => p.messageId === m.id);
  if (existing) return { chat: undefined, pin: existing };
  if (pins.length >= CHAT_LIMITS.pins) return new ApiError('PIN_LIMIT_REACHED', `a chat holds at most ${CHAT_LIMITS.pins} pinned messages: unpin one first`);
  const pin: StoredPin = { messageId: m.id, pinnedBy: userId, pinnedAt: at };
  return { chat: { ...chat, pins: [...pins, pin] }, pin };
}

/** Unpins a message (idempotent); `byRole` undefined: the service's own unpin of a deleted message. */
export function unpinning(chat: Chat, byRole: MemberRole | undefined, messageId: string): PinChange | undefined {
  if (byRole !== undefined) {
    const refused = mayPin(chat, byRole);
    if (refused) return refused;
  }
  const pins = chat.pins ?? [];
  const pin = pins.find((p) => p.messageId === messageId);
  if (!pin) return undefined;
  const rest = pins.filter((p) => p !== pin);
  const next: Chat = { ...chat, pins: rest };
  if (rest.length === 0) delete next.pins;
  return { chat: next, pin };
}
