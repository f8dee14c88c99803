import cassandra from 'cassandra-driver';
import t from 'tap';
import { cql, responseCode, timedOut } from '../../common/cassandra/index.ts';
import { BackendUnavailableError } from '../../common/index.ts';
import { CassandraNodeStore } from '../../node/store/index.ts';

const failing = (error: Error) => cql({ execute: async () => Promise.reject(error), batch: async () => Promise.reject(error) });
const responseError = (code: number) => new cassandra.errors.ResponseError(code, 'from the server');
/** What the driver rethrows when a coordinator's connection closes (a node killed) under a request. */
const socketClosed = (written: boolean) => Object.assign(new (cassandra.errors.DriverError as unknown as new (message: string) => Error)('Socket was closed'), { isSocketError: true, ...(written ? {} : { requestNotWritten: true }) });

t.test('driver errors that mean "the database cannot serve now" become BackendUnavailableError (HTTP 503)', async (t) => {
  for (const [name, error] of [
    ['no host available', new cassandra.errors.NoHostAvailableError({})],
    ['operation timed out', new cassandra.errors.OperationTimedOutError('slow', '127.0.0.1:9042')],
    ['unavailable', responseError(0x1000)],
    ['overloaded', responseError(0x1001)],
    ['write timeout', responseError(0x1100)],
    ['read timeout', responseError(0x1200)],
    ['connection closed mid-request', socketClosed(true)],
    ['connection closed before the request was written', socketClosed(false)],
  ] as const) {
    const rejected = await failing(error).execute('SELECT 1').then(() => undefined, (e: unknown) => e);
    t.ok(rejected instanceof BackendUnavailableError, `${name}: unavailable`);
    t.equal((rejected as BackendUnavailableError).cause, error, `${name}: the driver's error is the cause`);
  }
  t.equal(responseCode(await failing(responseError(0x1100)).execute('x').catch((e: unknown) => e)), 0x1100, 'a timeout stays recognisable through the wrapper');
  const down = async () => Promise.reject(new cassandra.errors.NoHostAvailableError({}));
  const store = CassandraNodeStore.open({ execute: down, batch: down }, 'chat');
  t.ok(await store.messages.lastSeq('app', 'chat').then(() => undefined, (e: unknown) => e) instanceof BackendUnavailableError, 'through the store too');
});

t.test('a timeout stays recognisable as one through the wrapper (its outcome is unknown)', async (t) => {
  const through = (error: Error) => failing(error).execute('UPDATE x SET a = 1 WHERE k = 1 IF a = 0').then(() => undefined, (e: unknown) => e);
  t.ok(timedOut(await through(responseError(0x1100))), 'the server timed out');
  t.ok(timedOut(await through(new cassandra.errors.OperationTimedOutError('no reply in time', '127.0.0.1:9042'))), 'the driver gave up waiting');
  t.notOk(timedOut(await through(new cassandra.errors.NoHostAvailableError({}))), 'not sent at all');
  t.ok(timedOut(await through(socketClosed(true))), 'the coordinator was lost after the request was written');
  t.notOk(timedOut(await through(socketClosed(false))), 'lost before it was written: not applied');
});

t.test('reads are marked idempotent (the driver may retry them on another node), writes are not unless their caller says so', async (t) => {
  const seen: (boolean | undefined)[] = [];
  const db = cql({ execute: async (_q: string, _p?: unknown, o?: cassandra.QueryOptions) => (seen.push(o?.isIdempotent), undefined as never), batch: async () => undefined as never });
  await db.execute('SELECT a FROM t WHERE k = 1');
  await db.execute('  select a FROM t');
  await db.execute('UPDATE t SET a = 1 WHERE k = 1');
  await db.execute('INSERT INTO t (k) VALUES (1) IF NOT EXISTS');
  await db.execute('DELETE FROM t WHERE k = 1', [], { isIdempotent: true });
  t.same(seen, [true, true, false, false, true]);
});

t.test('a statement the server rejects as wrong passes through unchanged (a bug, not an outage)', async (t) => {
  const syntax = responseError(0x2000);
  const rejected = await failing(syntax).execute('SELEC 1').then(() => undefined, (e: unknown) => e);
  t.equal(rejected, syntax);
  const invalid = responseError(0x2200);
  t.equal(await failing(invalid).execute('x').then(() => undefined, (e: unknown) => e), invalid);
});
