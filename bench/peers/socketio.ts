import { createServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Redis } from 'ioredis';
import { Server } from 'socket.io';

/**
 * Socket.IO 4 as its documentation shows it: rooms, the websocket transport only. A socket joins
 * the room named in its connect payload (`auth.room`); `send` events are emitted to the room (the
 * sender is a member too) and acknowledged. `POST /rooms/:room/messages` does the same over HTTP.
 * With REDIS_URL (the cluster scenario) the official Redis adapter spreads rooms over processes.
 *
 * PORT (0: any) and prints `{"listening": url}` when ready.
 */
const port = Number(process.env.PORT ?? 0);
const redisUrl = process.env.REDIS_URL;

const http = createServer((req, res) => {
  const match = /^\/rooms\/([^/]+)\/messages$/.exec(req.url ?? '');
  if (req.method !== 'POST' || !match) {
    res.writeHead(404).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const room = match[1]!;
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { content: string };
    io.to(room).emit('msg', { room, content: body.content });
    res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});

const io = new Server(http, { transports: ['websocket'], serveClient: false, perMessageDeflate: false });
if (redisUrl) {
  const pub = new Redis(redisUrl);
  // The adapter's channel prefix names this run: runs sharing one Redis never hear each other.
  io.adapter(createAdapter(pub, pub.duplicate(), { key: `socket.io${process.env.CHANNEL_PREFIX ?? ''}` }));
}

io.on('connection', (socket) => {
  const room = String((socket.handshake.auth as { room?: unknown }).room ?? 'lobby');
  void socket.join(room);
  socket.on('send', (message: { room: string; content: string }, ack?: () => void) => {
    io.to(message.room).emit('msg', message);
    ack?.();
  });
});

http.listen(port, '127.0.0.1', () => {
  const address = http.address();
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}` })}\n`);
});
