import Type, { type Static } from 'typebox';
import type { MessageFlag } from '../store/index.ts';

const Uuid = Type.String({ format: 'uuid' });

/** A flag as members and the backend see it (README, "Moderation"). */
export const FlagSchema = Type.Object({
  flagId: Uuid,
  chatId: Uuid,
  messageId: Uuid,
  senderId: Type.String({ format: 'uuid', description: 'The author of the flagged message' }),
  flaggedBy: Uuid,
  reason: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});
export type FlagView = Static<typeof FlagSchema>;

export const flagView = (f: MessageFlag): FlagView => ({ flagId: f.id, chatId: f.chatId, messageId: f.messageId, senderId: f.senderId, flaggedBy: f.flaggedBy, reason: f.reason, createdAt: f.createdAt });
