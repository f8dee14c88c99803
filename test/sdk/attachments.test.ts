import sharp from 'sharp';
import t from 'tap';
import { ChatApiError, type Message } from 'chat-service/client';
import { sdkApp } from '../helpers/sdk-app.ts';

/** The SDK's attachments in Node: uploadFile with progress, a send carrying the file, its signed URLs. */
const { server, client } = await sdkApp(t, 'files', { ATTACHMENT_MAX_BYTES: '200000' });

t.test('uploadFile, then send: the other member receives the file and can download it', async (t) => {
  const [alice, bob] = [await server.registerUser({ username: `alice-${process.pid}` }), await server.registerUser({ username: `bob-${process.pid}` })];
  const [A, B] = [await client(t, alice.userId), await client(t, bob.userId)];
  const chat = await A.createGroup('Photos', [bob.userId]);
  const png = await sharp({ create: { width: 200, height: 100, channels: 4, background: '#f80' } }).png().toBuffer();
  const progress: [number, number][] = [];
  const attachment = await A.uploadFile(chat.chatId, new Uint8Array(png), { name: 'orange.png', type: 'image/png', onProgress: (sent, total) => progress.push([sent, total]) });
  t.match(attachment, { name: 'orange.png', type: 'image/png', width: 200, height: 100, thumbnail: { type: 'image/webp' } });
  t.same(progress.at(-1), [png.length, png.length], 'progress ends at the whole file');

  const received = new Promise<Message>((resolve) => {
    const off = B.on('message.new', (e) => {
      if (e.message.attachments?.length) {
        off();
        resolve(e.message);
      }
    });
  });
  const sent = await A.send(chat.chatId, '', { attachments: [attachment.id] });
  t.same(sent.attachments, [attachment]);
  const message = await received;
  t.same(message.attachments, [attachment], 'Bob gets the attachment with the message');
  const urls = await B.attachmentUrls(chat.chatId, attachment.id);
  const file = await fetch(urls.url);
  t.equal(file.headers.get('content-type'), 'image/png');
  t.equal((await sharp(Buffer.from(await file.arrayBuffer())).metadata()).width, 200, 'Bob downloads the image');
  t.equal((await fetch(urls.thumbnailUrl!)).status, 200, 'and its thumbnail');

  const big = new Uint8Array(200_001);
  const refused = await A.uploadFile(chat.chatId, big, { name: 'big.bin' }).catch((e: unknown) => e);
  t.ok(refused instanceof ChatApiError && refused.code === 'FILE_TOO_LARGE', 'too large: refused before any byte is sent');
  const exe = new Uint8Array([0x4d, 0x5a, ...new Array<number>(300).fill(0)]);
  const bad = await A.uploadFile(chat.chatId, exe, { name: 'game.png', type: 'image/png' }).catch((e: unknown) => e);
  t.ok(bad instanceof ChatApiError && bad.code === 'FILE_TYPE_REFUSED', 'an executable named .png is refused at finalize');
});
