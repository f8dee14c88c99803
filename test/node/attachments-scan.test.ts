import t from 'tap';
import { freePort, integration, requireService, startService } from '../helpers/index.ts';

/**
 * The malware scan at finalize against a real clamd (scripts/services.sh starts one whose database
 * is the EICAR test signature): the EICAR test file is refused and deleted, a clean file kept; a
 * scanner that cannot be reached makes finalize 503, never a file kept unscanned.
 */
const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n');

async function setup(env: Record<string, string>) {
  const svc = await startService(env);
  const it = await integration(svc, 'att-scan');
  const alice = await it.user('alice');
  const chatId = (await it.node.post('/api/chats', { type: 'group', name: 'scan', memberIds: [] }, alice.jwt)).body.chatId as string;
  const finalize = async (bytes: Buffer, name: string, type: string) => {
    const created = await it.node.post(`/api/chats/${chatId}/uploads`, { name, size: bytes.length, type }, alice.jwt);
    const put = await fetch(created.body.upload.url, { method: 'PUT', headers: created.body.upload.headers, body: new Uint8Array(bytes) });
    await put.body?.cancel();
    return { uploadId: created.body.uploadId as string, result: await it.node.post(`/api/chats/${chatId}/uploads/${created.body.uploadId}/finalize`, undefined, alice.jwt) };
  };
  return { svc, it, alice, chatId, finalize };
}

const clamd = await requireService('clamav', (line) => t.comment(line));
if (!clamd) {
  t.comment('!!! malware scan suite SKIPPED: no clamd (scripts/services.sh start clamav) !!!');
  t.skip('clamd not running', () => undefined);
} else {
  t.test('the EICAR test file is refused and deleted at finalize; a clean file is kept', async (t) => {
    const { svc, it, alice, chatId, finalize } = await setup({ CLAMAV_ADDRESS: `${clamd.host}:${clamd.port}` });
    t.teardown(() => svc.stop());
    const infected = await finalize(EICAR, 'eicar.txt', 'text/plain');
    t.match(infected.result, { status: 422, body: { code: 'FILE_INFECTED', errors: [{ path: '/file' }] } }, infected.result.text);
    t.match(infected.result.body.detail, /Eicar-Test-Signature/, 'naming what was found');
    t.match(await it.node.post(`/api/chats/${chatId}/uploads/${infected.uploadId}/finalize`, undefined, alice.jwt), { status: 404, body: { code: 'UPLOAD_NOT_FOUND' } }, 'the upload is gone');
    const clean = await finalize(PDF, 'clean.pdf', 'application/pdf');
    t.equal(clean.result.status, 200, clean.result.text);
  });
}

t.test('a scanner that cannot be reached: finalize answers 503 and keeps nothing unscanned', async (t) => {
  const { svc, it, alice, chatId, finalize } = await setup({ CLAMAV_ADDRESS: `127.0.0.1:${await freePort()}`, CLAMAV_TIMEOUT_MS: '2000' });
  t.teardown(() => svc.stop());
  const r = await finalize(PDF, 'later.pdf', 'application/pdf');
  t.match(r.result, { status: 503, body: { code: 'UNAVAILABLE' } });
  t.match(await it.node.get(`/api/chats/${chatId}/attachments/${r.uploadId}`, alice.jwt), { status: 404, body: { code: 'ATTACHMENT_NOT_FOUND' } }, 'not served: never finalized');
});
