import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { parseOrigins } from '../http/cors.ts';
import { variantsOf } from '../http/validate.ts';
import { ConfigSchema, type Config } from './schema.ts';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

// One checker per variable: TypeBox stops collecting errors at `maxErrors` (8), so checking the whole
// object at once could leave later bad variables unreported.
const checkers = Object.entries(ConfigSchema.properties).map(([name, schema]) => [name, Compile(schema)] as const);

/**
 * Reads the variables named in the schema from `env` (unknown variables are ignored), applies
 * defaults, converts text to numbers and booleans, and reports every bad variable by name at once.
 * The result is frozen: configuration is parsed once and passed in, never read globally.
 */
export function loadConfig(env: Record<string, string | undefined>): Readonly<Config> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(ConfigSchema.properties)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  const value = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw)) as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, check] of checkers) {
    const shown = env[name] !== undefined ? JSON.stringify(env[name]) : '(unset)';
    const errors = [...check.Errors(value[name])];
    if (errors.length === 0) continue;
    // A choice among names says which: `LOG_LEVEL="loud": must be one of: "fatal", "error", …`.
    const allowed = variantsOf((ConfigSchema.properties as Record<string, unknown>)[name]);
    if (allowed) problems.push(`${name}=${shown}: must be one of: ${allowed.join(', ')}`);
    else for (const error of errors) problems.push(`${name}=${shown}: ${error.message}`);
  }
  const config = value as Config;
  // Checked alongside the schema errors (not only when those are absent), so every bad variable is reported at once.
  for (const [name, url] of [['CONTROL_PUBLIC_URL', config.CONTROL_PUBLIC_URL], ['NODE_PUBLIC_URL', config.NODE_PUBLIC_URL]] as const) {
    if (typeof url === 'string' && url && !isHttpUrl(url)) problems.push(`${name}=${JSON.stringify(url)}: must be an http(s) URL`);
  }
  // Nodes on separate embedded stores would each number the same chat: a cluster shares Cassandra.
  if (config.BUS === 'redis' && config.STORE !== 'cassandra') problems.push(`BUS="redis": runs several nodes, which must share one store: set STORE=cassandra (STORE=${JSON.stringify(config.STORE)})`);
  if (typeof config.CORS_ORIGINS === 'string') {
    const origins = parseOrigins(config.CORS_ORIGINS);
    if (origins !== '*') for (const o of origins) if (!isHttpUrl(o)) problems.push(`CORS_ORIGINS: ${JSON.stringify(o)} is not an origin`);
  }
  if (problems.length) throw new ConfigError([...new Set(problems)]);
  return Object.freeze(config);
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Where a service is reached from outside: the configured URL, or one built from host and port. */
export function publicUrl(configured: string, host: string, port: number): string {
  if (configured) return configured.replace(/\/$/, '');
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${shownHost}:${port}`;
}

/** For command-line entry points: the configuration, or a message naming every bad variable and exit 2. */
export function loadConfigOrExit(env: Record<string, string | undefined>): Readonly<Config> {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}
