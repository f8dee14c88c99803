import t from 'tap';
import { client, integration, startService } from '../helpers/index.ts';

t.test("the node's OpenAPI 3.1 document describes every route it serves", async (t) => {
  const svc = await startService();
  t.teardown(() => svc.stop());
  const it = await integration(svc);
  const user = await it.user();
  const doc = (await client(svc.nodeUrl).get('/openapi.json')).body;
  t.equal(doc.openapi, '3.1.0');
  const ops: [string, string][] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) for (const m of Object.keys(methods)) ops.push([m.toUpperCase(), path]);
  for (const expected of ['/api/messages/getMessages/{chatId}', '/api/users', '/api/users/signin', '/api/users/refresh', '/api/chats', '/api/messages/{chatId}', '/healthz', '/readyz', '/metrics']) {
    t.ok(doc.paths[expected], `documents ${expected}`);
  }
  const get = doc.paths['/api/messages/getMessages/{chatId}'].get;
  t.same(get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), ['path:chatId', 'query:lastMessage', 'query:size']);
  const dummy = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of ops) {
    const url = path.replace(/\{[^}]+\}/g, (name) => (name === '{reaction}' ? 'x' : dummy));
    const token = path.startsWith('/api/users') && !path.endsWith('/me') && !path.endsWith('/refresh') ? it.apiKey : user.jwt;
    const res = await client(svc.nodeUrl).call(method, url, { token, ...(method === 'POST' || method === 'PUT' ? { raw: '{}', headers: { 'content-type': 'application/json' } } : {}) });
    t.not(res.body?.code, 'ROUTE_NOT_FOUND', `${method} ${path} is served`);
    t.not(res.status, 405, `${method} ${path} accepts ${method}`);
    t.ok(res.status < 500, `${method} ${path}: no 5xx (${res.status})`);
  }
});
