import type { StoredMessage, StoredReaction } from '../store/index.ts';

/**
 * What a message shows of its reactions (README, "Reactions"): a count per value, the latest few,
 * and to one reader its own values; the full list is paged from its own route. A message holds at
 * most CHAT_LIMITS.reactionEntries reactions of CHAT_LIMITS.reactionsPerMessage values, so a
 * summary is bounded by the distinct values, never by the reactions: 500 reactions of 25 members
 * weigh about 1 KB in a view instead of 140.
 */
export const REACTION_SUMMARY = Object.freeze({
  /** Reactions a message view carries in `reactions`: the newest, oldest first. */
  latest: 10,
  /** Page size of the reactions route: default and maximum. */
  defaultPage: 50,
  maxPage: 100,
});

/** A position in a message's reaction list: after the reaction made at `createdAt` with id `reactionId`. */
const cursorOf = (r: StoredReaction) => `${r.createdAt}_${r.reactionId}`;
const order = (a: StoredReaction, b: StoredReaction) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.reactionId < b.reactionId ? -1 : a.reactionId > b.reactionId ? 1 : 0);

/**
 * The newest REACTION_SUMMARY.latest reactions, oldest first, in the order the reactions route
 * lists them (so they are its last page's tail). Reactions are kept in the order they were added,
 * which is that order unless a chat moved to a node whose clock is behind: then they are sorted.
 */
export function latestReactions(reactions: readonly StoredReaction[]): readonly StoredReaction[] {
  const ordered = inOrder(reactions) ? reactions : [...reactions].sort(order);
  return ordered.length <= REACTION_SUMMARY.latest ? ordered : ordered.slice(ordered.length - REACTION_SUMMARY.latest);
}

function inOrder(reactions: readonly StoredReaction[]): boolean {
  for (let i = 1; i < reactions.length; i++) if (order(reactions[i - 1]!, reactions[i]!) > 0) return false;
  return true;
}

/**
 * How many reactions of each value, in the order the values first appeared. Built with
 * Object.fromEntries so a value such as `__proto__` is an own key like any other.
 */
export function reactionCounts(reactions: readonly StoredReaction[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const r of reactions) counts.set(r.reaction, (counts.get(r.reaction) ?? 0) + 1);
  return Object.fromEntries(counts);
}

/** The values `userId` reacted with, in the order added. */
export const ownReactions = (m: StoredMessage, userId: string): string[] => m.reactions.filter((r) => r.userId === userId).map((r) => r.reaction);

export interface ReactionPage {
  reactions: StoredReaction[];
  /** Where the next page starts; absent on the last page. */
  next?: string;
}

/**
 * One page of a message's reactions, oldest first, optionally of one value. The cursor names the
 * last reaction of the previous page by its time and id, not its place, so a reaction removed
 * between two pages moves nothing: every reaction present throughout is listed exactly once.
 */
export function reactionPage(m: StoredMessage, options: { after?: string; limit: number; reaction?: string }): ReactionPage {
  const all = (options.reaction === undefined ? [...m.reactions] : m.reactions.filter((r) => r.reaction === options.reaction)).sort(order);
  const after = options.after;
  const start = after === undefined ? 0 : all.findIndex((r) => cursorOf(r) > after);
  const from = start < 0 ? all.length : start;
  const reactions = all.slice(from, from + options.limit);
  const last = reactions.at(-1);
  return from + options.limit < all.length && last ? { reactions, next: cursorOf(last) } : { reactions };
}
