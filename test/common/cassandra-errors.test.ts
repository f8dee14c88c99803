import cassandra from 'cassandra-driver';
import t from 'tap';
import { CAS_TIMEOUT_MS, cql, responseCode, timedOut } from '../../common/cassandra/index.ts';
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

t.test('what may run twice is marked idempotent (the driver may retry it or send it to a second node); a compare-and-set has a client timeout', async (t) => {
  const seen: { idempotent: boolean | undefined; timeout: number | undefined }[] = [];
  const record = (o?: cassandra.QueryOptions) => (seen.push({ idempotent: o?.isIdempotent, timeout: o?.readTimeout }), undefined as never);
  const db = cql({ execute: async (_q: string, _p?: unknown, o?: cassandra.QueryOptions) => record(o), batch: async (_s: unknown, o?: cassandra.QueryOptions) => record(o) });
  const cases: [string, () => Promise<unknown>, boolean, number | undefined][] = [
    ['a read', () => db.execute('SELECT a FROM t WHERE k = 1'), true, undefined],
    ['a read in lower case', () => db.execute('  select a FROM t'), true, undefined],
    ['a serial read (a Paxos round)', () => db.execute('SELECT a FROM t WHERE k = 1', [], { consistency: cassandra.types.consistencies.localSerial }), false, undefined],
    ['an upsert', () => db.execute('UPDATE t SET a = ? WHERE k = 1', [1]), true, undefined],
    ['a delete', () => db.execute('DELETE FROM t WHERE k = 1'), true, undefined],
    ['a compare-and-set', () => db.execute('INSERT INTO t (k) VALUES (1) IF NOT EXISTS'), false, CAS_TIMEOUT_MS],
    ['a conditional update', () => db.execute('UPDATE t SET a = ? WHERE k = 1 IF a = ?', [2, 1]), false, CAS_TIMEOUT_MS],
    ['a counter', () => db.execute('UPDATE t SET n = n + ? WHERE k = 1', [1]), false, undefined],
    ['a list prepend', () => db.execute('UPDATE t SET l = ? + l WHERE k = 1', [[1]]), false, undefined],
    ['a server-made value', () => db.execute('UPDATE t SET at = toTimestamp(now()) WHERE k = 1'), false, undefined],
    ['a caller that says so', () => db.execute('UPDATE t SET n = n + ? WHERE k = 1', [1], { isIdempotent: true }), true, undefined],
    ['a batch of upserts', () => db.batch([{ query: 'UPDATE t SET a = ? WHERE k = 1', params: [1] }, { query: 'INSERT INTO u (k) VALUES (?)', params: [2] }]), true, undefined],
    ['a conditional batch', () => db.batch([{ query: 'UPDATE t SET a = ? WHERE k = 1 IF a = ?', params: [1, 0] }, { query: 'UPDATE t SET b = ? WHERE k = 1', params: [2] }]), false, CAS_TIMEOUT_MS],
  ];
  for (const [what, run, idempotent, timeout] of cases) {
    await run();
    t.same(seen.pop(), { idempotent, timeout }, what);
  }
});

t.test('a statement the server rejects as wrong passes through unchanged (a bug, not an outage)', async (t) => {
  const syntax = responseError(0x2000);
  const rejected = await failing(syntax).execute('SELEC 1').then(() => undefined, (e: unknown) => e);
  t.equal(rejected, syntax);
  const invalid = responseError(0x2200);
  t.equal(await failing(invalid).execute('x').then(() => undefined, (e: unknown) => e), invalid);
});
