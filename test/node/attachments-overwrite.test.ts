import t, { type Test } from 'tap';
import type { ObjectStore } from '../../node/files/index.ts';
import { fetchHeaders, finalizeUpload, integration, onEachObjectStore, serviceFiles, startService, type Running } from '../helpers/index.ts';

/**
 * A finalized attachment's bytes are the ones finalize checked, for good: its upload URL, still
 * valid up to 15 minutes after finalize, cannot replace them with other bytes of the same size
 * (which would skip type sniffing and the malware scan). On the embedded store the node refuses
 * such a PUT (409 UPLOAD_FINALIZED); on S3 the PUT lands where the URL points, which no download
 * reads. Either way the download and a second finalize answer what was checked. On both stores.
 */
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
/** A Windows executable's header, exactly as long as the PDF. */
const EXE = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(PDF.length - 2, 0x90)]);

async function suite(t: Test, svc: Running, files: ObjectStore) {
  const it = await integration(svc, `overwrite-${files.kind}`);
  const [alice, bob] = [await it.user('alice'), await it.user('bob')];
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'overwrite', memberIds: [bob.userId] }, alice.jwt)).body.chatId as string;
  const download = async (id: string) => {
    const access = await it.node.get(`/api/chats/${chatId}/attachments/${id}`, bob.jwt);
    t.equal(access.status, 200, access.text);
    return Buffer.from(await (await fetch(access.body.url)).arrayBuffer());
  };

  await t.test('a PUT with the upload URL after finalize changes nothing served', async (t) => {
    const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'report.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
    t.equal(created.status, 201, created.text);
    const { uploadId, upload } = created.body as { uploadId: string; upload: { url: string; headers: Record<string, string> } };
    t.equal((await fetch(upload.url, { method: 'PUT', headers: fetchHeaders(upload.headers), body: new Uint8Array(PDF) })).status, 200, 'the bytes are put');
    const first = await finalizeUpload(it.node, alice.jwt, chatId, uploadId);
    t.equal(first.status, 200, first.text);
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'the report', attachments: [uploadId] }, alice.jwt)).status, 201);
    t.same(await download(uploadId), PDF, 'the checked bytes are served');

    const again = await fetch(upload.url, { method: 'PUT', headers: fetchHeaders(upload.headers), body: new Uint8Array(EXE) });
    const answer = await again.text();
    if (files.kind === 'local') {
      t.equal(again.status, 409, 'the node refuses the PUT');
      t.match(JSON.parse(answer), { code: 'UPLOAD_FINALIZED' });
    } else t.comment(`S3 answered the late PUT ${again.status}: it lands where no download reads`);
    t.same(await download(uploadId), PDF, 'the download still serves the checked bytes');
    t.same((await finalizeUpload(it.node, alice.jwt, chatId, uploadId)).body, first.body, 'finalize again: the same attachment');
    t.same(await download(uploadId), PDF, 'and still the checked bytes');
  });

  await t.test('an upload asked for before final keys existed (its record v: 1) still finalizes and serves', async (t) => {
    // Made as the node made them before: the record without a final key, the bytes put at `file`.
    const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name: 'old.pdf', size: PDF.length, type: 'application/pdf' }, alice.jwt);
    const uploadId = created.body.uploadId as string;
    const prefix = `a/${it.appId}/${chatId}/${uploadId}`;
    const record = JSON.parse(Buffer.from((await files.read(`${prefix}/record.json`))!).toString('utf8')) as Record<string, unknown>;
    await files.put(`${prefix}/record.json`, Buffer.from(JSON.stringify({ ...record, v: 1 })), 'application/json');
    await files.put(`${prefix}/file`, PDF, 'application/pdf');
    const done = await finalizeUpload(it.node, alice.jwt, chatId, uploadId);
    t.match(done, { status: 200, body: { type: 'application/pdf', size: PDF.length } }, done.text);
    t.equal((await it.node.post(`/api/messages/${chatId}`, { content: 'old', attachments: [uploadId] }, alice.jwt)).status, 201);
    t.same(await download(uploadId), PDF, 'served from where it always was');
  });
}

await onEachObjectStore(t, 'chat-service-overwrite-tests', async (t, env) => {
  const svc = await startService(env);
  t.teardown(() => svc.stop());
  const files = await serviceFiles(svc, env);
  t.teardown(() => files.close());
  await suite(t, svc, files);
});
