import Type from 'typebox';
import { DisplayText } from '../../common/index.ts';

const Uuid = Type.String({ format: 'uuid' });

const Timestamp = Type.String({ format: 'date-time' });

export const BanBody = Type.Object(
  {
    userId: Uuid,
    reason: Type.Optional(DisplayText(1, 500, { description: 'Why, shown to the user in the refusals (1–500 characters)' })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When the ban lifts by itself (in the future); absent: until it is lifted' })),
  },
  { additionalProperties: false },
);

export const Ban = Type.Object({ userId: Uuid, reason: Type.Optional(Type.String()), expiresAt: Type.Optional(Timestamp), createdAt: Timestamp, bannedBy: Type.String({ description: '`apiKey:<keyId>`' }) });
export const BanList = Type.Object({ bans: Type.Array(Ban), nextCursor: Type.Optional(Type.String()) });
export const BanParams = Type.Object({ userId: Uuid });

export const ListQuery = Type.Object(
  {
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'default 50, at most 100' })),
    cursor: Type.Optional(Type.String({ format: 'uuid', description: '`nextCursor` of the previous page' })),
  },
  { additionalProperties: false },
);

export const Action = Type.Object({
  actionId: Uuid,
  at: Timestamp,
  action: Type.Union(
    [Type.Literal('user.banned'), Type.Literal('user.unbanned'), Type.Literal('blocklist.updated'), Type.Literal('member.muted'), Type.Literal('member.unmuted'), Type.Literal('member.banned'), Type.Literal('member.unbanned'), Type.Literal('flag.dismissed'), Type.Literal('flag.deleted'), Type.Literal('flag.banned')],
    { description: 'Bans from the application, the blocklist, mutes and bans in chats, and reviews of flags (`flag.<outcome>`)' },
  ),
  userId: Type.Optional(Uuid),
  chatId: Type.Optional(Uuid),
  messageId: Type.Optional(Uuid),
  by: Type.String({ description: '`apiKey:<keyId>` (the backend) or `user:<userId>` (a group owner or admin)' }),
  reason: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Timestamp),
});
export const ActionList = Type.Object({ actions: Type.Array(Action), nextCursor: Type.Optional(Type.String()) });
