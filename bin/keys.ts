import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateSigningKey, KeyRing, KeyRotationConflict, loadConfigOrExit, type Config, type SigningKey, type SigningKeyStore } from '../common/index.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../control/index.ts';
import { openStores, type Stores } from './stores.ts';

/** Added to the longest token lifetime for the default retirement: clocks of processes differ a little. */
const SKEW_SECONDS = 60;

const HELP = `Usage: npm run keys -- <command> [options]   (or: node --import tsx bin/keys.ts ...)

Operator commands for the signing keys: the Ed25519 keys that sign the control service's access
tokens and API keys ("control"), and the nodes' user JWTs, from which the nodes' cluster key for
node-to-node calls is derived too ("node"). They work on the store the service uses (STORE: LMDB
under DATA_DIR, or the Cassandra keyspace), so run them with the service's environment. They may
run while the service runs.

Commands:
  list [--json]               every key of both services: kid, state and dates (never a private half)
  rotate <control|node> [--activate-in <s>] [--retire-after <s>] [--json]
                              store a new signing key for that service. Running services load it
                              within SIGNING_KEY_REFRESH_SECONDS; it signs from --activate-in seconds
                              on. The keys it replaces keep verifying the tokens they signed until
                              --retire-after seconds after that, then retire.
  help                        this text

Options of rotate:
  --activate-in <seconds>     until the new key signs; default 2 x SIGNING_KEY_REFRESH_SECONDS, so
                              every running process has loaded it before any token it signs exists
  --retire-after <seconds>    from activation until the replaced keys retire; default the longest
                              lifetime of a token they signed plus ${SKEW_SECONDS} s: control ${ACCESS_TOKEN_TTL_SECONDS + SKEW_SECONDS} (access tokens
                              last ${ACCESS_TOKEN_TTL_SECONDS} s), node USER_JWT_TTL_SECONDS + ${SKEW_SECONDS}. 0 retires them at activation:
                              for a leaked key, every token it signed stops working then
  --json                      print the result as one JSON object

What a retired key still does:
  control  API keys it signed keep working: they never expire, so revoke or rotate each one to end
           it. A dashboard session whose last access token it signed can still refresh (the refresh
           token proves the session), so nobody is logged out. Access tokens it signed are refused.
  node     nothing: user JWTs it signed are refused (clients refresh with their refresh token,
           which needs no key), and nodes refuse it as the cluster key on new connections.

Exit codes: 0 done, 1 another rotation ran at the same time (nothing changed), 2 usage or
configuration error.
`;

type Service = 'control' | 'node';

/** What a key does at `now`, by the same rules the services apply (KeyRing). */
function stateOf(key: SigningKey, ring: KeyRing, now: number): 'signing' | 'next' | 'verifying' | 'retired' {
  if (key.retiresAt !== undefined && Date.parse(key.retiresAt) <= now) return 'retired';
  if (ring.signing().kid === key.kid) return 'signing';
  return Date.parse(key.activeFrom ?? key.createdAt) > now ? 'next' : 'verifying';
}

const describe = (key: SigningKey, ring: KeyRing, now: number) => ({
  kid: key.kid,
  state: stateOf(key, ring, now),
  createdAt: key.createdAt,
  activeFrom: key.activeFrom ?? key.createdAt,
  ...(key.retiresAt ? { retiresAt: key.retiresAt } : {}),
});

function storeOf(stores: Stores, service: Service): SigningKeyStore {
  return service === 'control' ? stores.control.signingKeys : stores.node.signingKeys;
}

/** `--name <non-negative integer>`: the number, undefined when absent, or an error text. */
function seconds(argv: string[], name: string): number | undefined | string {
  const at = argv.indexOf(name);
  if (at < 0) return undefined;
  const text = argv[at + 1] ?? '';
  return /^\d+$/.test(text) ? Number(text) : `${name} takes a whole number of seconds, not ${JSON.stringify(text)}`;
}

async function list(stores: Stores, json: boolean): Promise<number> {
  const now = Date.now();
  const all: Record<Service, ReturnType<typeof describe>[]> = { control: [], node: [] };
  for (const service of ['control', 'node'] as const) {
    const keys = await storeOf(stores, service).list();
    if (keys.length === 0) continue;
    const ring = new KeyRing(keys, () => now);
    all[service] = keys.map((k) => describe(k, ring, now));
  }
  if (json) {
    process.stdout.write(`${JSON.stringify(all)}\n`);
    return 0;
  }
  for (const service of ['control', 'node'] as const) {
    if (all[service].length === 0) process.stdout.write(`${service.padEnd(8)} (no key yet: the service has not started on this store)\n`);
    for (const k of all[service]) {
      const when = k.state === 'retired' ? `retired ${k.retiresAt}` : k.state === 'next' ? `signs from ${k.activeFrom}` : k.retiresAt ? `retires ${k.retiresAt}` : `since ${k.activeFrom}`;
      process.stdout.write(`${service.padEnd(8)} ${k.kid}  ${k.state.padEnd(9)}  ${when}\n`);
    }
  }
  return 0;
}

async function rotate(stores: Stores, config: Readonly<Config>, service: Service, argv: string[]): Promise<number> {
  const activateIn = seconds(argv, '--activate-in') ?? 2 * config.SIGNING_KEY_REFRESH_SECONDS;
  const lifetime = service === 'control' ? ACCESS_TOKEN_TTL_SECONDS : config.USER_JWT_TTL_SECONDS;
  const retireAfter = seconds(argv, '--retire-after') ?? lifetime + SKEW_SECONDS;
  if (typeof activateIn === 'string' || typeof retireAfter === 'string') {
    process.stderr.write(`${typeof activateIn === 'string' ? activateIn : retireAfter}\n\n${HELP}`);
    return 2;
  }
  const store = storeOf(stores, service);
  const before = await store.list();
  if (before.length === 0) {
    process.stderr.write(`the ${service} service has no signing key yet: start it once on this store first\n`);
    return 2;
  }
  const now = Date.now();
  const activeFrom = new Date(now + activateIn * 1000);
  const next = generateSigningKey(new Date(now), activeFrom);
  const retireAt = new Date(activeFrom.getTime() + retireAfter * 1000).toISOString();
  try {
    await store.rotate(next, retireAt);
  } catch (error) {
    if (!(error instanceof KeyRotationConflict)) throw error;
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  // The keys that were still unretired: each now retires at retireAt, or sooner if it already did.
  const live = new Set(before.filter((k) => k.retiresAt === undefined || Date.parse(k.retiresAt) > now).map((k) => k.kid));
  const replaced = (await store.list()).filter((k) => live.has(k.kid)).map((k) => ({ kid: k.kid, retiresAt: k.retiresAt ?? retireAt }));
  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ service, kid: next.kid, activeFrom: next.activeFrom, replaced })}\n`);
    return 0;
  }
  process.stdout.write(`${service}: stored key ${next.kid}; it signs from ${next.activeFrom}\n`);
  for (const k of replaced) process.stdout.write(`${service}: key ${k.kid} stops signing then and retires at ${k.retiresAt}\n`);
  if (service === 'control') process.stdout.write('control: API keys signed by a replaced key keep working until revoked\n');
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, service] = argv;
  if (!command || command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return command ? 0 : 2;
  }
  if (!(command === 'list' || (command === 'rotate' && (service === 'control' || service === 'node')))) {
    process.stderr.write(`unknown or incomplete command: ${argv.join(' ')}\n\n${HELP}`);
    return 2;
  }
  const config = loadConfigOrExit(process.env);
  if (config.STORE === 'embedded') {
    const missing = ['control', 'node'].map((name) => join(config.DATA_DIR, name)).filter((path) => !existsSync(path));
    if (missing.length) {
      process.stderr.write(`no store at ${missing.join(' and ')}; set DATA_DIR to the service's data directory\n`);
      return 2;
    }
  }
  const stores = await openStores(config);
  try {
    return command === 'list' ? await list(stores, argv.includes('--json')) : await rotate(stores, config, service as Service, argv);
  } finally {
    await stores.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
