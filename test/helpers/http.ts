export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * A small JSON client for tests: never throws on HTTP statuses, parses JSON bodies when present.
 */
export function client(base: string) {
  const call = async <T = any>(method: string, path: string, options: { token?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {}): Promise<HttpResult<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | Buffer | undefined;
    if (options.raw !== undefined) body = options.raw;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, { method, headers, body: body as BodyInit | undefined });
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
  return {
    call,
    get: <T = any>(path: string, token?: string) => call<T>('GET', path, { token }),
    post: <T = any>(path: string, body?: unknown, token?: string) => call<T>('POST', path, { body, token }),
    put: <T = any>(path: string, body?: unknown, token?: string) => call<T>('PUT', path, { body, token }),
    patch: <T = any>(path: string, body?: unknown, token?: string) => call<T>('PATCH', path, { body, token }),
    del: <T = any>(path: string, token?: string) => call<T>('DELETE', path, { token }),
  };
}

let counter = 0;
/** A unique, valid account for this test process. */
export function newAccount(prefix = 'user') {
  counter++;
  return {
    companyName: `Company ${counter}`,
    email: `${prefix}-${process.pid}-${counter}-${Date.now()}@example.com`,
    password: `pass-${counter}-correct-horse`,
  };
}
