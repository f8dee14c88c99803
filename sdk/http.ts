import { ChatApiError, ChatNetworkError, type Problem } from './errors.ts';
import { retryAfterMsOf } from './retry-after.ts';

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
}

/** A fetch wrapper: JSON in and out, problems turned into `ChatApiError`, network failures into `ChatNetworkError`. */
export async function request<T>(baseUrl: string, path: string, options: RequestOptions = {}, fetchImpl: typeof fetch = fetch): Promise<T> {
  const url = new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetchImpl(url, { method: options.method ?? 'GET', headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  } catch (cause) {
    throw new ChatNetworkError(`cannot reach ${url.origin}`, { cause });
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch (cause) {
    throw new ChatNetworkError(`${res.status} from ${url.pathname} is not JSON`, { cause });
  }
  if (!res.ok) {
    const problem = parsed as Partial<Problem> | undefined;
    const wait = { retryAfterMs: retryAfterMsOf(res.headers.get('retry-after') ?? undefined) };
    if (problem && typeof problem.code === 'string') throw new ChatApiError(problem as Problem, wait);
    throw new ChatApiError({ type: 'about:blank', title: res.statusText, status: res.status, detail: text.slice(0, 200), code: res.status >= 500 ? 'UNAVAILABLE' : 'INTERNAL' }, wait);
  }
  return parsed as T;
}
