import cassandra from 'cassandra-driver';
import t from 'tap';
import { cql, responseCode, timedOut } from '../../common/cassandra/index.ts';
import { BackendUnavailableError } from '../../common/index.ts';
import { CassandraNodeStore } from '../../node/store/index.ts';

const failing = (error: Error) => cql({ execute: async () => Promise.reject(error), batch: async () => Promise.reject(error) });
const responseError = (code: number) => new cassandra.errors.ResponseError(code, 'from the server');

t.test('driver errors that mean "the database cannot serve now" become BackendUnavailableError (HTTP 503)', async (t) => {
  for (const [name, error] of [
    ['no host available', new cassandra.errors.NoHostAvailableError({})],
    ['operation timed out', new cassandra.errors.OperationTimedOutError('slow', '127.0.0.1:9042')],
    ['unavailable', responseError(0x1000)],
    ['overloaded', responseError(0x1001)],
    ['write timeout', responseError(0x1100)],
    ['read timeout', responseError(0x1200)],
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
});

t.test('a statement the server rejects as wrong passes through unchanged (a bug, not an outage)', async (t) => {
  const syntax = responseError(0x2000);
  const rejected = await failing(syntax).execute('SELEC 1').then(() => undefined, (e: unknown) => e);
  t.equal(rejected, syntax);
  const invalid = responseError(0x2200);
  t.equal(await failing(invalid).execute('x').then(() => undefined, (e: unknown) => e), invalid);
});
