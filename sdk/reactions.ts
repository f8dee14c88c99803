import type { Message, Reaction } from './types.ts';

/** Messages carry their latest 10 reactions (README, "Reactions"). */
const LATEST = 10;

/**
 * A message as it is after a `reaction.added` or `reaction.removed` event: counts, latest reactions
 * and, when `me` is given and the reaction is yours, `ownReactions`. Events carry only what changed,
 * so this is how a client keeps a message's reactions current without asking again. Pure: returns
 * a new message and leaves the given one as it was.
 */
export function applyReaction(message: Message, reaction: Reaction, added: boolean, me?: string): Message {
  const same = (r: Reaction) => r.senderId === reaction.senderId && r.reaction === reaction.reaction;
  const counts = { ...message.reactionCounts };
  const n = counts[reaction.reaction] ?? 0;
  // Each event arrives once (the realtime client delivers them exactly once, replays included).
  if (added) counts[reaction.reaction] = n + 1;
  else if (n <= 1) delete counts[reaction.reaction];
  else counts[reaction.reaction] = n - 1;
  const others = message.reactions.filter((r) => !same(r));
  const reactions = added ? [...others, reaction].slice(-LATEST) : others;
  const next: Message = { ...message, reactions, reactionCounts: counts };
  if (me !== undefined && reaction.senderId === me) {
    const own = (message.ownReactions ?? []).filter((v) => v !== reaction.reaction);
    next.ownReactions = added ? [...own, reaction.reaction] : own;
  }
  return next;
}
