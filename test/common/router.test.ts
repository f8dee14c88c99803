import t from 'tap';
import type { AnyRoute, HttpMethod } from '../../common/http/index.ts';
import { Router } from '../../common/http/index.ts';

const route = (method: HttpMethod, path: string): AnyRoute => ({
  method,
  path,
  operationId: `${method.toLowerCase()} ${path}`,
  summary: path,
  tags: [],
  responses: { 200: { description: 'ok' } },
  handler: () => ({ status: 200 }),
});

t.test('a static segment beats a parameter, whatever the registration order', async (t) => {
  for (const order of ['param first', 'static first']) {
    const param = route('GET', '/apps/:id');
    const mine = route('GET', '/apps/mine');
    const router = new Router(order === 'param first' ? [param, mine] : [mine, param]);
    const hit = router.match('GET', '/apps/mine');
    t.equal(hit.kind, 'found', order);
    if (hit.kind === 'found') {
      t.equal(hit.route, mine, `${order}: the static route`);
      t.same(hit.params, {}, `${order}: no params`);
    }
    const other = router.match('GET', '/apps/42');
    t.equal(other.kind === 'found' ? other.route : undefined, param, `${order}: other values reach the param route`);
    t.same(other.kind === 'found' ? other.params : undefined, { id: '42' });
  }
});

t.test('matches several parameters and ignores empty segments', async (t) => {
  const r = route('GET', '/apps/:appId/keys/:keyId');
  const router = new Router([r, route('GET', '/apps/:appId')]);
  const hit = router.match('GET', '/apps/a1/keys/k1/');
  t.equal(hit.kind === 'found' ? hit.route : undefined, r);
  t.same(hit.kind === 'found' ? hit.params : undefined, { appId: 'a1', keyId: 'k1' });
});

t.test('a known path with another method is 405 with the allowed methods', async (t) => {
  const router = new Router([route('GET', '/apps/:id'), route('DELETE', '/apps/:id'), route('POST', '/apps')]);
  const hit = router.match('PUT', '/apps/1');
  t.equal(hit.kind, 'method-not-allowed');
  t.same(hit.kind === 'method-not-allowed' ? [...hit.allowed].sort() : undefined, ['DELETE', 'GET']);
  const root = router.match('GET', '/apps');
  t.same(root, { kind: 'method-not-allowed', allowed: ['POST'] });
});

t.test('an unknown path is 404', async (t) => {
  const router = new Router([route('GET', '/apps/:id'), route('GET', '/apps/mine')]);
  t.same(router.match('GET', '/nothing'), { kind: 'not-found' });
  t.same(router.match('GET', '/apps/1/extra'), { kind: 'not-found' }, 'too many segments');
  t.same(router.match('GET', '/apps'), { kind: 'not-found' }, 'too few segments');
  t.same(router.match('GET', '/'), { kind: 'not-found' });
  t.same(new Router([]).match('GET', '/apps'), { kind: 'not-found' }, 'no routes');
});

t.test('parameters are percent-decoded', async (t) => {
  const r = route('GET', '/users/:name');
  const router = new Router([r]);
  const hit = router.match('GET', '/users/J%C3%BCrgen%20M%2FK');
  t.equal(hit.kind === 'found' ? hit.route : undefined, r);
  t.same(hit.kind === 'found' ? hit.params : undefined, { name: 'Jürgen M/K' });
});

t.test('malformed percent-encoding is not-found, not a crash', async (t) => {
  const router = new Router([route('GET', '/users/:name'), route('GET', '/users/:name/chats/:chat')]);
  for (const path of ['/users/%', '/users/%E0%A4%A', '/users/%zz', '/users/ok/chats/%C3']) {
    let result;
    t.doesNotThrow(() => {
      result = router.match('GET', path);
    }, path);
    t.same(result, { kind: 'not-found' }, path);
  }
});

t.test('a duplicate route throws', async (t) => {
  t.throws(() => new Router([route('GET', '/apps/:id'), route('GET', '/apps/:id')]), /duplicate route GET \/apps\/:id/);
  t.throws(() => new Router([route('GET', '/apps/:id'), route('GET', '/apps/:appId')]), /duplicate route/, 'param names do not make a path distinct');
  t.doesNotThrow(() => new Router([route('GET', '/apps/:id'), route('DELETE', '/apps/:id')]), 'another method is not a duplicate');
});

t.test('each route gets the parameter names of its own path', async (t) => {
  const get = route('GET', '/apps/:id');
  const del = route('DELETE', '/apps/:appId');
  const router = new Router([get, del]);
  const g = router.match('GET', '/apps/7');
  const d = router.match('DELETE', '/apps/7');
  t.equal(g.kind === 'found' ? g.route : undefined, get);
  t.same(g.kind === 'found' ? g.params : undefined, { id: '7' });
  t.equal(d.kind === 'found' ? d.route : undefined, del);
  t.same(d.kind === 'found' ? d.params : undefined, { appId: '7' });
});

t.test('routes lists every registered route', async (t) => {
  const routes = [route('GET', '/a'), route('POST', '/a'), route('GET', '/b/:x')];
  const router = new Router(routes);
  t.same(new Set(router.routes), new Set(routes));
  t.equal(router.routes.length, 3);
});
