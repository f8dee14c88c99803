import t from 'tap';
import { BackendUnavailableError, OverloadedError, problemReply, toClientError } from '../../common/index.ts';

t.test('an exception becomes UNAVAILABLE when a backend is down, with Retry-After when it is overloaded, else INTERNAL', async (t) => {
  const down = toClientError(new BackendUnavailableError('cassandra'));
  t.match(down, { code: 'UNAVAILABLE', status: 503 });
  t.equal(problemReply(down).headers?.['retry-after'], undefined, 'no retry hint for an outage');
  const busy = new OverloadedError('node 10.0.0.2:9000', 2);
  t.ok(busy instanceof BackendUnavailableError, 'an overload is a kind of unavailability');
  t.match(busy.message, /overloaded; retry after 2 s/);
  t.equal(problemReply(toClientError(busy)).headers?.['retry-after'], '2', 'an overload carries Retry-After');
  const bug = toClientError(new TypeError('x is undefined'));
  t.match(bug, { code: 'INTERNAL', status: 500, detail: 'internal error' }, 'a bug says nothing of its message');
});
