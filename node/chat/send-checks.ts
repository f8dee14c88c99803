import { ApiError } from '../../common/index.ts';
import type { ChatKind, Member } from '../store/index.ts';
import { mutedRefusal } from './chat-moderation.ts';
import { notFound } from './chat-membership.ts';

/** What a send's checks read of its chat's actor. */
export interface SendCheckHost {
  readonly appId: string;
  readonly members: ReadonlyMap<string, Member>;
  kind(): ChatKind;
  now: () => Date;
  /** Whether the two users of a direct chat block each other (see ActorDeps.blocks). */
  blocks?: { refusal(appId: string, userId: string, otherId: string): ApiError | undefined | Promise<ApiError | undefined> };
}

/**
 * Why `userId` may not send to this chat now, if it may not: not a member, muted, or in a direct
 * chat where one of the two blocks the other. From the actor's memory, but for a block (a lookup).
 */
export async function senderRefusal(host: SendCheckHost, userId: string): Promise<ApiError | undefined> {
  if (!host.members.has(userId)) return notFound();
  const muted = mutedRefusal(host.members.get(userId), host.now);
  if (muted) return muted;
  if (host.kind() !== 'direct' || !host.blocks) return undefined;
  const other = [...host.members.keys()].find((id) => id !== userId);
  return other === undefined ? undefined : host.blocks.refusal(host.appId, userId, other);
}

/** The first mentioned user who is not a member, named by its place (`/mentions/N`), if any. */
export function mentionRefusal(members: ReadonlyMap<string, Member>, mentions: readonly string[] | undefined): ApiError | undefined {
  const outsider = mentions?.findIndex((id) => !members.has(id)) ?? -1;
  if (outsider < 0) return undefined;
  return ApiError.field('VALIDATION_FAILED', `/mentions/${outsider}`, 'not a member of this chat');
}
