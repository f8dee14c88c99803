import t from 'tap';
import { ConfigError, ConfigSchema, loadConfig, publicUrl } from '../../common/config/index.ts';

const problemsOf = (env: Record<string, string | undefined>): string[] => {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

t.test('defaults apply when nothing is set', async (t) => {
  const config = loadConfig({});
  for (const [name, schema] of Object.entries(ConfigSchema.properties)) {
    t.equal(config[name as keyof typeof config], (schema as { default?: unknown }).default, name);
  }
  t.equal(config.CONTROL_PORT, 8080);
  t.equal(config.TRUST_PROXY, false);
  t.equal(config.ROLE, 'standalone');
});

t.test('empty variables count as unset', async (t) => {
  const config = loadConfig({ CONTROL_PORT: '', LOG_LEVEL: '' });
  t.equal(config.CONTROL_PORT, 8080);
  t.equal(config.LOG_LEVEL, 'info');
});

t.test('numbers and booleans are converted from text', async (t) => {
  const config = loadConfig({ CONTROL_PORT: '9000', NODE_PORT: '0', MAX_BODY_BYTES: '2048', TRUST_PROXY: 'true', ROLE: 'node', LOG_LEVEL: 'debug' });
  t.equal(config.CONTROL_PORT, 9000);
  t.equal(config.NODE_PORT, 0);
  t.equal(config.MAX_BODY_BYTES, 2048);
  t.equal(config.TRUST_PROXY, true);
  t.equal(config.ROLE, 'node');
  t.equal(config.LOG_LEVEL, 'debug');
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false);
});

t.test('unknown variables are ignored', async (t) => {
  const config = loadConfig({ PATH: '/usr/bin', SOMETHING_ELSE: 'x' });
  t.notOk('PATH' in config);
  t.notOk('SOMETHING_ELSE' in config);
});

t.test('every bad variable is reported by name in one ConfigError', async (t) => {
  const env = {
    CONTROL_PORT: 'abc',
    NODE_PORT: '70000',
    TRUST_PROXY: 'maybe',
    ROLE: 'everything',
    MAX_BODY_BYTES: '12.5',
    CLUSTER_NAME: 'Not Valid!',
    NODE_PUBLIC_URL: 'ftp://example.test',
  };
  let caught: unknown;
  try {
    loadConfig(env);
  } catch (error) {
    caught = error;
  }
  t.ok(caught instanceof ConfigError, 'throws a ConfigError');
  if (!(caught instanceof ConfigError)) return;
  const named = new Set(caught.problems.map((p) => p.split('=')[0]));
  t.same([...named].sort(), Object.keys(env).sort(), 'each bad variable, and only those');
  t.ok(caught.problems.some((p) => p.startsWith('CONTROL_PORT="abc": ')), 'shows the bad value');
  for (const name of Object.keys(env)) t.match(caught.message, name, `the message names ${name}`);
});

t.test('a NODE_PUBLIC_URL that is not an http(s) URL is refused', async (t) => {
  for (const url of ['not a url', 'ftp://example.test', 'example.test:8081']) {
    const problems = problemsOf({ NODE_PUBLIC_URL: url });
    t.equal(problems.length, 1, url);
    t.match(problems[0], /^NODE_PUBLIC_URL=.*must be an http\(s\) URL/, url);
  }
  t.equal(loadConfig({ NODE_PUBLIC_URL: 'https://chat.example.test' }).NODE_PUBLIC_URL, 'https://chat.example.test');
  t.match(problemsOf({ CONTROL_PUBLIC_URL: 'nope' }), [/^CONTROL_PUBLIC_URL=/]);
});

t.test('CORS_ORIGINS entries must be origins', async (t) => {
  t.match(problemsOf({ CORS_ORIGINS: 'https://ok.example, bad' }), [/^CORS_ORIGINS: "bad"/]);
  t.equal(loadConfig({ CORS_ORIGINS: '*' }).CORS_ORIGINS, '*');
  t.equal(loadConfig({ CORS_ORIGINS: 'https://a.example,https://b.example' }).CORS_ORIGINS, 'https://a.example,https://b.example');
});

t.test('the result is frozen', async (t) => {
  const config = loadConfig({});
  t.ok(Object.isFrozen(config));
  t.throws(() => {
    (config as { CONTROL_PORT: number }).CONTROL_PORT = 1;
  }, TypeError);
  t.equal(config.CONTROL_PORT, 8080);
});

t.test('publicUrl', async (t) => {
  t.equal(publicUrl('https://chat.example/', '0.0.0.0', 80), 'https://chat.example');
  t.equal(publicUrl('', '0.0.0.0', 8081), 'http://127.0.0.1:8081');
  t.equal(publicUrl('', '10.0.0.2', 8080), 'http://10.0.0.2:8080');
});
