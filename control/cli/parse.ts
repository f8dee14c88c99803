import { parseArgs } from 'node:util';
import { Value } from 'typebox/value';
import { ConfigSchema } from '../../common/config/index.ts';
import { CLUSTER_STATUSES, TIERS, type ClusterStatus, type Tier } from '../store/types.ts';

/** An operator command, checked in full before any store is opened. */
export type Command =
  | { type: 'help' }
  | { type: 'app.show'; appId: string }
  | { type: 'app.status'; appId: string; status: 'ACTIVE' | 'SUSPENDED' }
  | { type: 'app.list'; cluster?: string; json: boolean }
  | { type: 'app.move'; appId: string; tier?: Tier; cluster?: string }
  | { type: 'cluster.list'; json: boolean }
  | { type: 'cluster.register'; name: string; endpoint: string; status?: ClusterStatus };

/** The command line is wrong (exit 2); the message says how. */
export class UsageError extends Error {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const appId = (value: string): string => {
  if (!UUID.test(value)) throw new UsageError(`not an application id (a UUID): ${value}`);
  return value.toLowerCase();
};

const oneOf = <T extends string>(what: string, allowed: readonly T[], value: string): T => {
  const found = allowed.find((a) => a === value.toUpperCase());
  if (!found) throw new UsageError(`unknown ${what} ${value}: one of ${allowed.join(', ')}`);
  return found;
};

/** The rule of CLUSTER_NAME, read from the configuration schema. */
const clusterName = (value: string): string => {
  if (!Value.Check(ConfigSchema.properties.CLUSTER_NAME, value)) {
    throw new UsageError(`bad cluster name ${value}: 1-63 lower-case letters, digits and '-', starting with a letter or digit (as CLUSTER_NAME)`);
  }
  return value;
};

/** A public base URL, as NODE_PUBLIC_URL: http(s), no credentials, query or fragment; one trailing '/' dropped. */
const endpoint = (value: string): string => {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const ok = url !== undefined && /^https?:\/\/[^/]/i.test(value) && !/[?#]/.test(value) && !url.username && !url.password;
  if (!ok) throw new UsageError(`bad endpoint ${value}: an http(s) URL such as https://eu-1.chat.example, without credentials, query or fragment`);
  return value.replace(/\/$/, '');
};

/** `args` as exactly the named positionals and the given options (`--name value` or `--name=value`). */
function split<const O extends Record<string, { type: 'string' | 'boolean' }>>(args: string[], names: readonly string[], options: O) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { positionals, values } = parsed;
  if (positionals.length !== names.length) {
    throw new UsageError(`expected ${names.length ? names.map((n) => `<${n}>`).join(' ') : 'no arguments'}, got ${positionals.length ? positionals.join(' ') : 'none'}`);
  }
  return { positionals: positionals as string[], values };
}

/** The command `argv` names; throws UsageError when it names none, or names one wrongly. */
export function parseCommand(argv: readonly string[]): Command {
  const [noun, verb, ...rest] = argv;
  if (noun === undefined) throw new UsageError('no command given');
  if (noun === 'help' || argv.includes('--help') || argv.includes('-h')) return { type: 'help' };
  switch (`${noun} ${verb ?? ''}`) {
    case 'app show': {
      const { positionals } = split(rest, ['appId'], {});
      return { type: 'app.show', appId: appId(positionals[0]!) };
    }
    case 'app suspend':
    case 'app reactivate': {
      const { positionals } = split(rest, ['appId'], {});
      return { type: 'app.status', appId: appId(positionals[0]!), status: verb === 'suspend' ? 'SUSPENDED' : 'ACTIVE' };
    }
    case 'app list': {
      const { values } = split(rest, [], { cluster: { type: 'string' }, json: { type: 'boolean' } });
      return { type: 'app.list', json: values.json === true, ...(values.cluster === undefined ? {} : { cluster: clusterName(values.cluster) }) };
    }
    case 'app tier': {
      const { positionals } = split(rest, ['appId', 'tier'], {});
      return { type: 'app.move', appId: appId(positionals[0]!), tier: oneOf('tier', TIERS, positionals[1]!) };
    }
    case 'app move': {
      const { positionals, values } = split(rest, ['appId'], { tier: { type: 'string' }, cluster: { type: 'string' } });
      if (values.tier === undefined && values.cluster === undefined) throw new UsageError('app move needs --tier, --cluster or both');
      return {
        type: 'app.move',
        appId: appId(positionals[0]!),
        ...(values.tier === undefined ? {} : { tier: oneOf('tier', TIERS, values.tier) }),
        ...(values.cluster === undefined ? {} : { cluster: clusterName(values.cluster) }),
      };
    }
    case 'cluster list': {
      const { values } = split(rest, [], { json: { type: 'boolean' } });
      return { type: 'cluster.list', json: values.json === true };
    }
    case 'cluster register': {
      const { positionals, values } = split(rest, ['name', 'endpoint'], { status: { type: 'string' } });
      return {
        type: 'cluster.register',
        name: clusterName(positionals[0]!),
        endpoint: endpoint(positionals[1]!),
        ...(values.status === undefined ? {} : { status: oneOf('status', CLUSTER_STATUSES, values.status) }),
      };
    }
    default:
      throw new UsageError(`unknown command: ${argv.join(' ')}`);
  }
}
