import type { Test } from 'tap';
import type { HttpResult } from './http.ts';

/**
 * Asserts that `res` is an RFC 9457 problem response with the given status and `code`: content-type
 * application/problem+json and the fields type, title, status, detail and code.
 */
export function assertProblem(t: Test, res: HttpResult, status: number, code: string, label = ''): void {
  const at = label ? `${label}: ` : '';
  t.equal(res.status, status, `${at}status ${status}`);
  t.equal(res.headers.get('content-type')?.split(';')[0]?.trim(), 'application/problem+json', `${at}problem content-type`);
  t.equal(res.body?.code, code, `${at}code ${code}`);
  t.match(res.body, { type: String, title: String, status, detail: String, code }, `${at}problem fields`);
  t.ok(typeof res.body?.type === 'string' && res.body.type.length > 0 && typeof res.body?.detail === 'string' && res.body.detail.length > 0, `${at}type and detail not empty`);
}

/** The Retry-After header as whole seconds, or NaN when missing or not an integer. */
export function retryAfterSeconds(res: HttpResult): number {
  const value = res.headers.get('retry-after');
  return value !== null && /^\d+$/.test(value) ? Number(value) : NaN;
}
