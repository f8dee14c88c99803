/** A blocklist holds at most this many entries of at most this many characters (README, "Moderation"). */
export const BLOCKLIST_LIMITS = Object.freeze({ entries: 10_000, entryChars: 100 });
