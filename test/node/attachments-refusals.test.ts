import sharp from 'sharp';
import t, { type Test } from 'tap';
import { finalizeUpload, integration, putUpload, startService } from '../helpers/index.ts';

/**
 * Files refused at finalize by what their bytes are, never by their name or declared type:
 * - an image whose metadata cannot be stripped (past the pixel limit, or bytes that do not
 *   decode) is refused with 422 IMAGE_UNREADABLE, never kept with its EXIF;
 * - scripts (`#!`) and SVG or HTML wherever their markup stands in the head are refused with
 *   415 FILE_TYPE_REFUSED, while text that only looks alike is accepted.
 * A refused upload is deleted: no state to resume, nothing to download.
 */
const SECRET = 'GPS-SECRET-MARKER';
const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: '#2a6' } })
    .jpeg({ quality: 50 })
    .withExif({ IFD0: { Copyright: SECRET } })
    .toBuffer();

const svc = await startService({ ATTACHMENT_MAX_BYTES: '2000000' });
t.teardown(() => svc.stop());
const it = await integration(svc, 'refusals');
const alice = await it.user('alice');
const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'refusals', memberIds: [] }, alice.jwt)).body.chatId as string;

/** Uploads and finalizes `bytes`: the finalize's answer, after checking a refusal left nothing. */
async function finalized(t: Test, bytes: Buffer, name: string, type: string) {
  const uploadId = await putUpload(it.node, alice.jwt, chatId, new Uint8Array(bytes), name, type);
  const answer = await finalizeUpload(it.node, alice.jwt, chatId, uploadId);
  if (answer.status !== 200) {
    t.match(await it.node.get(`/api/chats/${chatId}/uploads/${uploadId}`, alice.jwt), { status: 404, body: { code: 'UPLOAD_NOT_FOUND' } }, `${name}: the refused upload is deleted`);
    t.match(await it.node.get(`/api/chats/${chatId}/attachments/${uploadId}`, alice.jwt), { status: 404 }, `${name}: nothing to download`);
  }
  return answer;
}

t.test('an image whose metadata cannot be stripped is refused, not kept with it', async (t) => {
  const small = await finalized(t, await jpeg(640, 480), 'small.jpg', 'image/jpeg');
  t.match(small, { status: 200, body: { width: 640, height: 480 } }, 'a readable image is kept, stripped');

  const huge = await jpeg(8000, 7000);
  t.ok(huge.includes(SECRET), 'the huge image carries its EXIF');
  const tooBig = await finalized(t, huge, 'huge.jpg', 'image/jpeg');
  t.match(tooBig, { status: 422, body: { code: 'IMAGE_UNREADABLE', errors: [{ path: '/file', message: /56000000 pixels \(8000×7000\), more than the 50000000/ }] } }, 'past the pixel limit: 422 naming the rule');

  const whole = await jpeg(640, 480);
  const cut = whole.subarray(0, Math.floor(whole.length * 0.5));
  t.ok(cut.includes(SECRET), 'the truncated image still carries its EXIF');
  const truncated = await finalized(t, cut, 'cut.jpg', 'image/jpeg');
  t.match(truncated, { status: 422, body: { code: 'IMAGE_UNREADABLE', errors: [{ path: '/file', message: /do not decode/ }] } }, 'bytes that do not decode: 422');
  t.match(truncated.body.detail, /image\/jpeg image must be readable, to strip its metadata/);

  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#2a6' } }).png().toBuffer();
  t.match(await finalized(t, png.subarray(0, png.length - 20), 'cut.png', 'image/png'), { status: 422, body: { code: 'IMAGE_UNREADABLE' } }, 'a truncated PNG too');
});

const REFUSED: [string, Buffer, string][] = [
  ['a shell script', Buffer.from('#!/bin/sh\necho pwned\n'), 'application/x-sh'],
  ['a script after a byte order mark', Buffer.from('\ufeff#!/usr/bin/env python3\nprint(1)\n'), 'application/x-sh'],
  ['SVG after an XML comment', Buffer.from('<!-- drawn by hand -->\n<svg onload="alert(1)"></svg>'), 'image/svg+xml'],
  ['SVG by its doctype alone', Buffer.from('<?xml version="1.0"?>\n<!DOCTYPE   Svg PUBLIC "-//W3C//DTD SVG 1.1//EN">\n'), 'image/svg+xml'],
  ['SVG under another prefix', Buffer.from('<?xml version="1.0"?>\n<x:drawing xmlns:x="http://www.w3.org/2000/svg"/>'), 'image/svg+xml'],
  ['HTML starting with <head>', Buffer.from('<head><script>alert(1)</script></head>'), 'text/html'],
  ['HTML after some text, in capitals', Buffer.from(`${'notes '.repeat(300)}\n<BODY onload=alert(1)>`), 'text/html'],
  ['a <script> alone', Buffer.from('just text <script\tsrc=//x.test/a.js></script>'), 'text/html'],
  ['HTML in UTF-16', Buffer.from('<!doctype html><p>hi</p>', 'utf16le'), 'text/html'],
];

t.test('scripts, SVG and HTML are refused wherever their markup stands in the first 4 KB', async (t) => {
  for (const [name, bytes, type] of REFUSED) {
    const answer = await finalized(t, bytes, 'notes.txt', 'text/plain');
    t.match(answer, { status: 415, body: { code: 'FILE_TYPE_REFUSED', errors: [{ path: '/file', message: `type ${type} is refused` }] } }, name);
  }
  const plain = await finalized(t, Buffer.from('1 < 2 and 3 > 2; <svgish> and <headline> are not tags; #! not at the start\n'), 'notes.txt', 'text/plain');
  t.match(plain, { status: 200, body: { type: 'application/octet-stream' } }, 'text that only looks alike is accepted');
  const late = await finalized(t, Buffer.concat([Buffer.alloc(5000, 'a'), Buffer.from('<html>')]), 'late.txt', 'text/plain');
  t.equal(late.status, 200, 'markup past the first 4 KB is not looked for (the file is served as a download, never rendered)');
});
