import type { SearchOptions } from './types.ts';

/** Query parameters of a search. */
export function searchQuery(q: string, options: SearchOptions): Record<string, string | number | undefined> {
  const { chatIds, inThread, hasAttachments, ...rest } = options;
  return { q, ...rest, chatIds: chatIds?.join(','), inThread: inThread === undefined ? undefined : String(inThread), hasAttachments: hasAttachments === undefined ? undefined : String(hasAttachments) };
}
