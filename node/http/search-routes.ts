import Type, { type Static } from 'typebox';
import { ApiError, defineRoute, isApiError, type AnyRoute } from '../../common/index.ts';
import { MessageSchema } from '../chat/index.ts';
import type { NodeContext } from '../context.ts';
import { MessageSearch, SEARCH_LIMITS, type SearchFilters, type Searcher } from '../search/index.ts';

const Uuid = Type.String({ format: 'uuid' });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const SearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: SEARCH_LIMITS.queryChars, description: `The words to find, 1–${SEARCH_LIMITS.queryChars} characters, at most ${SEARCH_LIMITS.terms} words; the last one also as a prefix` }),
  chatIds: Type.Optional(Type.String({ maxLength: SEARCH_LIMITS.chatIds * 37, description: `Only these chats: ids separated by commas, at most ${SEARCH_LIMITS.chatIds}` })),
  senderId: Type.Optional(Uuid),
  before: Type.Optional(Type.String({ format: 'date-time', description: 'Only messages sent before this time' })),
  after: Type.Optional(Type.String({ format: 'date-time', description: 'Only messages sent after this time' })),
  inThread: Type.Optional(Type.Boolean({ description: 'true: only replies in threads; false: no replies' })),
  hasAttachments: Type.Optional(Type.Boolean({ description: 'true: only messages with files; false: only without' })),
  order: Type.Optional(Type.Union([Type.Literal('newest'), Type.Literal('relevance')], { description: `newest (the default): newest first; relevance: the newest ${SEARCH_LIMITS.relevanceCandidates} hits, most relevant first` })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMITS.maxSize, description: `default ${SEARCH_LIMITS.defaultSize}, minimum 1, maximum ${SEARCH_LIMITS.maxSize}` })),
  cursor: Type.Optional(Type.String({ maxLength: 100, description: "The previous page's nextCursor" })),
});

const SearchHitSchema = Type.Object({
  chatId: Uuid,
  message: MessageSchema,
  matches: Type.Array(Type.Tuple([Type.Integer(), Type.Integer()]), { description: "Where the query's words are in message.content: [start, end) in UTF-16 code units" }),
});
const SearchPageSchema = Type.Object({
  hits: Type.Array(SearchHitSchema, { description: 'Newest first (or most relevant first with order=relevance); a page may hold fewer than `size` (it reads a bounded number of index entries): follow nextCursor' }),
  nextCursor: Type.Optional(Type.String({ description: 'Present when there may be more: pass it as `cursor`' })),
});

/** The query's filters, or the error naming the field. */
function filtersOf(query: Static<typeof SearchQuery>): SearchFilters | ApiError {
  const f: SearchFilters = {};
  if (query.chatIds !== undefined) {
    const ids = query.chatIds.split(',').filter((id) => id !== '');
    if (ids.length === 0 || ids.length > SEARCH_LIMITS.chatIds || !ids.every((id) => UUID.test(id))) {
      return ApiError.field('VALIDATION_FAILED', '/query/chatIds', `must be 1–${SEARCH_LIMITS.chatIds} chat ids separated by commas`);
    }
    f.chatIds = ids.map((id) => id.toLowerCase());
  }
  if (query.before !== undefined && query.after !== undefined && Date.parse(query.after) >= Date.parse(query.before)) {
    return ApiError.field('VALIDATION_FAILED', '/query/after', 'must be before `before`');
  }
  for (const key of ['senderId', 'before', 'after', 'inThread', 'hasAttachments'] as const) if (query[key] !== undefined) (f as Record<string, unknown>)[key] = query[key];
  return f;
}

/** Message search (README, "Search"): a user's, in the chats it is in; the backend's, in the whole application. */
export function searchRoutes(ctx: NodeContext): AnyRoute[] {
  const engine = new MessageSearch(ctx.store);
  const run = async (who: Searcher, query: Static<typeof SearchQuery>) => {
    if (ctx.config.SEARCH_INDEX === 'off') return new ApiError('UNAVAILABLE', 'this deployment keeps no search index (SEARCH_INDEX=off)');
    const filters = filtersOf(query);
    if (isApiError(filters)) return filters;
    const page = await engine.search(who, query.q, filters, query.size ?? SEARCH_LIMITS.defaultSize, query.cursor, query.order ?? 'newest');
    return isApiError(page) ? page : { status: 200 as const, body: page };
  };
  const responses = { 200: { description: 'A page of hits', schema: SearchPageSchema }, 400: { description: 'A query with no word, too many words, or invalid filters (the error names the field)' }, 503: { description: 'The deployment keeps no search index (SEARCH_INDEX=off: UNAVAILABLE)' } };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/search/messages',
      operationId: 'searchMessages',
      summary: 'Search the messages of the chats you are in now (all, or those of chatIds): newest first, with the places of the words',
      tags: ['search'],
      query: SearchQuery,
      auth: { verify: ctx.authenticateUser, security: 'userJwt', responses: { 401: { description: 'JWT missing, invalid or expired' }, 403: { description: 'The user is banned (USER_BANNED)' }, 429: { description: "Over this user's request budget (RATE_LIMITED, with Retry-After)" } } },
      responses,
      handler: ({ query, auth }) => run({ appId: auth.appId, userId: auth.userId }, query),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/search/all-messages',
      operationId: 'searchAllMessages',
      summary: "Search every chat's messages of the application (the backend, with the API key): the same query and filters",
      tags: ['search'],
      query: SearchQuery,
      auth: { verify: ctx.authenticateApiKey, security: 'apiKey' },
      responses: { ...responses, 401: { description: 'API key missing or invalid' }, 429: { description: "Over the key's request budget (RATE_LIMITED)" } },
      handler: ({ query, auth }) => run({ appId: auth.appId, backend: true }, query),
    }),
  ];
}
