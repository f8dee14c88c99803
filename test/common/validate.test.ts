import t from 'tap';
import Type from 'typebox';
import { Settings } from 'typebox/system';
import { ApiError } from '../../common/errors/index.ts';
import { compileValidator } from '../../common/http/validate.ts';

const problems = (result: ReturnType<ReturnType<typeof compileValidator>>) => (result instanceof ApiError ? (result.extra.errors ?? []) : undefined);

t.test('query values are converted from text to the schema types', async (t) => {
  const validate = compileValidator(Type.Object({ size: Type.Integer({ minimum: 1 }), desc: Type.Optional(Type.Boolean()) }), 'query');
  t.same(validate({ size: '20', desc: 'true' }), { value: { size: 20, desc: true } });
  t.same(validate({ size: '20' }), { value: { size: 20 } });
  const bad = validate({ size: 'twenty' });
  t.ok(bad instanceof ApiError, 'text that is no number fails');
  t.same(problems(bad)?.map((p) => p.path), ['/query/size']);
});

t.test('path parameters are converted too', async (t) => {
  const validate = compileValidator(Type.Object({ n: Type.Integer() }), 'params');
  t.same(validate({ n: '7' }), { value: { n: 7 } });
  const bad = validate({ n: 'x' });
  t.same(problems(bad)?.map((p) => p.path), ['/params/n']);
});

t.test('bodies are checked as sent, not converted', async (t) => {
  const validate = compileValidator(Type.Object({ size: Type.Integer() }), 'body');
  t.same(validate({ size: 20 }), { value: { size: 20 } });
  const bad = validate({ size: '20' });
  t.ok(bad instanceof ApiError, 'a numeric string is not a number in a body');
  if (bad instanceof ApiError) {
    t.equal(bad.code, 'VALIDATION_FAILED');
    t.equal(bad.status, 400);
    t.same(problems(bad)?.map((p) => p.path), ['/body/size']);
    t.match(bad.detail, /^\/body\/size: /, 'the detail names the first problem');
  }
});

t.test('error paths point into the request part', async (t) => {
  const validate = compileValidator(Type.Object({ x: Type.String(), nested: Type.Object({ y: Type.Integer() }) }), 'body');
  const bad = validate({ x: 1, nested: { y: 'no' } });
  t.same(problems(bad)?.map((p) => p.path).sort(), ['/body/nested/y', '/body/x']);
  const missing = validate({ nested: { y: 1 } });
  t.same(problems(missing), [{ path: '/body/x', message: 'is required' }], 'a missing field is named itself');
});

t.test('unknown properties are reported by name, each with the known fields', async (t) => {
  const validate = compileValidator(Type.Object({ x: Type.String(), y: Type.Optional(Type.String()) }, { additionalProperties: false }), 'body');
  const bad = validate({ x: 'ok', extra: 1, more: 2 });
  t.ok(bad instanceof ApiError);
  t.same(problems(bad), [
    { path: '/body/extra', message: 'is not a known field (known: x, y)' },
    { path: '/body/more', message: 'is not a known field (known: x, y)' },
  ]);
});

t.test('a union of constants lists what it allows; a constant says what it must be', async (t) => {
  const validate = compileValidator(Type.Object({ level: Type.Union([Type.Literal('info'), Type.Literal('warn')]), kind: Type.Literal('group') }), 'query');
  t.same(problems(validate({ level: 'loud', kind: 'x' })), [
    { path: '/query/level', message: 'must be one of: "info", "warn"' },
    { path: '/query/kind', message: 'must be "group"' },
  ]);
});

t.test('a WebSocket frame’s problems name the frame’s own fields', async (t) => {
  const validate = compileValidator(Type.Object({ type: Type.Literal('message.send'), content: Type.String() }), 'frame');
  const bad = validate({ type: 'message.send' });
  t.same(problems(bad), [{ path: '/content', message: 'is required' }]);
  t.equal((bad as ApiError).detail, '/content: is required');
});

t.test('at most 10 errors are reported', async (t) => {
  // TypeBox itself stops collecting at `maxErrors` (default 8); raise it so the validator's own cap is what is tested.
  const before = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 100 });
  t.teardown(() => Settings.Set({ maxErrors: before }));
  const names = Array.from({ length: 15 }, (_, i) => `f${String(i).padStart(2, '0')}`);
  const validate = compileValidator(Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()]))), 'body');
  const bad = validate(Object.fromEntries(names.map((n, i) => [n, i])));
  const list = problems(bad) ?? [];
  t.equal(list.length, 10);
  t.same(list.map((p) => p.path), names.slice(0, 10).map((n) => `/body/${n}`));
});

t.test('with default settings the report stays within the cap too', async (t) => {
  const names = Array.from({ length: 15 }, (_, i) => `f${i}`);
  const validate = compileValidator(Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()]))), 'query');
  const list = problems(validate(Object.fromEntries(names.map((n) => [n, [1]])))) ?? [];
  t.ok(list.length > 0 && list.length <= 10, `${list.length} errors`);
});

t.test('a valid value passes through', async (t) => {
  const validate = compileValidator(Type.Object({ name: Type.String({ minLength: 1 }) }, { additionalProperties: false }), 'body');
  t.same(validate({ name: 'a' }), { value: { name: 'a' } });
  const empty = validate({ name: '' });
  t.same(problems(empty)?.map((p) => p.path), ['/body/name']);
});

t.test('sizes are checked before patterns: an oversized value never meets its pattern', async (t) => {
  // A pattern that backtracks quadratically on this value: were it run, 60,000 characters would
  // take seconds; the size check reports the length rule alone, at once.
  const validate = compileValidator(Type.Object({ email: Type.String({ maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$' }), items: Type.Array(Type.String({ maxLength: 5 }), { maxItems: 2 }) }), 'body');
  const started = performance.now();
  const bad = validate({ email: `a@${'.'.repeat(60_000)}@`, items: ['x'] });
  const ms = performance.now() - started;
  t.ok(ms < 100, `answered in ${ms.toFixed(1)} ms`);
  t.same(problems(bad), [{ path: '/body/email', message: 'must not have more than 254 characters' }]);
  t.same(problems(validate({ email: 'a@b.c', items: ['x', 'y', 'z'] })), [{ path: '/body/items', message: 'must not have more than 2 items' }]);
  t.same(problems(validate({ email: 'a@b.c', items: ['x', 'y'.repeat(11)] })), [{ path: '/body/items/1', message: 'must not have more than 5 characters' }]);
});

t.test('a union told apart by `type`: the problems named are those of the variant the value names', async (t) => {
  const validate = compileValidator(
    Type.Union([
      Type.Object({ type: Type.Literal('direct'), userId: Type.String({ format: 'uuid' }) }, { additionalProperties: false }),
      Type.Object({ type: Type.Literal('group'), name: Type.String({ maxLength: 5 }), memberIds: Type.Array(Type.String()) }, { additionalProperties: false }),
    ]),
    'body',
  );
  t.same(problems(validate({ type: 'group', name: 'far too long', memberIds: [] }))?.map((p) => p.path), ['/body/name']);
  t.same(problems(validate({ type: 'group', name: 'ok', memberIds: [1] }))?.map((p) => p.path), ['/body/memberIds/0']);
  t.same(problems(validate({ type: 'direct', userId: 'nope' }))?.map((p) => p.path), ['/body/userId']);
  t.ok(problems(validate({ type: 'other' }))?.length, 'an unknown type still fails');
});
