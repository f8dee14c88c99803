/**
 * Message search (README, "Search"): the query side of the index the message store writes
 * (NodeStore.search), for a chat user and for the application's backend.
 */
export { matchesOf, MessageSearch, SEARCH_LIMITS, type SearchFilters, type SearchOrder, type SearchHit, type SearchPage, type Searcher } from './message-search.ts';
