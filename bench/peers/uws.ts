import uws from 'uWebSockets.js';
import { Redis } from 'ioredis';

/**
 * The ceiling: bare uWebSockets.js pub/sub as its documentation shows it, with no auth and no
 * storage. A socket joins the room named in its URL (`/?room=…`) and is greeted; a message
 * `{"room","id","content"}` is published to the room as it came (the sender is a member too) and
 * acked `{"ack":id}`. `POST /rooms/:room/messages` does the same over HTTP.
 *
 * With REDIS_URL (the cluster scenario) messages go through Redis pub/sub, one channel per room,
 * and each process publishes what it receives to its local subscribers: the thinnest way to spread
 * uWS pub/sub over several processes.
 *
 * PORT (0: any) and prints `{"listening": url}` when ready.
 */
const port = Number(process.env.PORT ?? 0);
const redisUrl = process.env.REDIS_URL;
/** Names this run's channels: runs sharing one Redis (two benchmarks at once) never hear each other. */
const prefix = process.env.CHANNEL_PREFIX ?? '';
const app = uws.App();

let publish = (room: string, message: string | ArrayBuffer) => void app.publish(room, message, false);
/** Resolves once this process receives the room's messages (at once without Redis). */
let join: (room: string) => Promise<unknown> = async () => undefined;
if (redisUrl) {
  const pub = new Redis(redisUrl);
  const sub = new Redis(redisUrl);
  await Promise.all([pub.ping(), sub.ping()]);
  const joined = new Map<string, Promise<unknown>>();
  sub.on('messageBuffer', (channel: Buffer, message: Buffer) => app.publish(channel.toString().slice(prefix.length), message, false));
  publish = (room, message) => void pub.publish(prefix + room, typeof message === 'string' ? message : Buffer.from(message));
  join = (room) => {
    let subscribed = joined.get(room);
    if (!subscribed) joined.set(room, (subscribed = sub.subscribe(prefix + room)));
    return subscribed;
  };
}

const ROOM_FIELD = '{"room":"';
const roomOf = (text: string) => text.slice(ROOM_FIELD.length, text.indexOf('"', ROOM_FIELD.length));
const idOf = (text: string) => /"id":(\d+)/.exec(text)?.[1];

app.ws<{ room: string; closed?: boolean }>('/*', {
  compression: uws.DISABLED,
  idleTimeout: 120,
  sendPingsAutomatically: true,
  maxBackpressure: 2 * 1024 * 1024,
  upgrade: (res, req, context) => {
    const room = new URLSearchParams(req.getQuery() ?? '').get('room') ?? 'lobby';
    res.upgrade({ room }, req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
  },
  open: (ws) => {
    const data = ws.getUserData();
    ws.subscribe(data.room);
    // Greeted once messages published anywhere reach it.
    void join(data.room).then(() => data.closed || ws.send('{"hello":1}'));
  },
  close: (ws) => {
    ws.getUserData().closed = true;
  },
  message: (ws, message) => {
    const text = Buffer.from(message).toString();
    publish(roomOf(text), message);
    ws.send(`{"ack":${idOf(text)}}`);
  },
});

app.post('/*', (res, req) => {
  const room = /^\/rooms\/([^/]+)\/messages$/.exec(req.getUrl())?.[1];
  if (!room) {
    res.writeStatus('404 Not Found').end();
    return;
  }
  const chunks: Buffer[] = [];
  let aborted = false;
  res.onAborted(() => (aborted = true));
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last) return;
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { content: string };
    publish(room, JSON.stringify({ room, content: body.content }));
    if (!aborted) res.cork(() => res.writeStatus('201 Created').writeHeader('content-type', 'application/json').end('{"ok":true}'));
  });
});

app.listen('127.0.0.1', port, (token) => {
  if (!token) throw new Error(`cannot listen on ${port}`);
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${uws.getSocketPort(token)}` })}\n`);
});
