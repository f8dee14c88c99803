import t from 'tap';
import { connectionId, nextConnection } from '../../node/realtime/connection-id.ts';
import { senderOf, socketState, takeToken } from '../../node/realtime/socket-state.ts';

// What a socket keeps (node/realtime/socket-state.ts): uWS copies the state's own properties onto
// the socket object, and past 15 of them V8 gives each socket a dictionary of its own (832 bytes
// instead of a 136-byte array).

const principal = { appId: 'app', userId: 'alice', expiresAt: 1_790_000_000_000 };
const fields = { connId: 1, encoding: 'json' as const, tokenKey: 'k', resume: undefined };

t.test('a socket state has at most 15 own properties, the same ones whatever it was opened with', async (t) => {
  const plain = socketState(principal, fields);
  const resuming = socketState(principal, { ...fields, encoding: 'msgpack', resume: new Map([['c', { seq: 1 }]]) }, plain);
  t.ok(Object.keys(plain).length <= 15, `${Object.keys(plain).length} properties`);
  t.same(Object.keys(resuming), Object.keys(plain), 'one shape for every socket');
  t.equal(plain.chats, undefined, 'no chat set before the first chat');
  t.equal(plain.sender, undefined, 'no limits before the first action');
  t.equal(plain.expiresAt, 1_790_000_000, 'the expiry in seconds: a small integer');
});

t.test("a socket's limits are made with its first action, a full bucket of twice the rate", async (t) => {
  const c = socketState(principal, fields);
  const sender = senderOf(c, 5, 1000);
  t.equal(senderOf(c, 5, 2000), sender, 'made once');
  const taken = Array.from({ length: 11 }, () => takeToken(sender, 5, 1000));
  t.same(taken, [...Array(10).fill(true), false], 'a burst of 10, then refused');
  t.ok(takeToken(sender, 5, 1200), 'one more after a fifth of a second');
});

t.test('connection ids are UUIDs, one per number, the same each time it is made', async (t) => {
  const [a, b] = [nextConnection(), nextConnection()];
  t.match(connectionId(a), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(connectionId(a), connectionId(a));
  t.not(connectionId(a), connectionId(b));
  t.equal(connectionId('given-id'), 'given-id', 'an id given as a string is its own');
});
