import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/** Longest accepted endpoint URL. */
export const MAX_WEBHOOK_URL = 2048;

/**
 * Whether an address is one a webhook may reach: a public unicast address. Loopback, private,
 * link-local, carrier-grade NAT, unique-local, multicast, reserved and unspecified ranges are
 * refused (ipaddr.js names the range; only `unicast` passes), and so are IPv4 addresses mapped
 * into IPv6, judged as the IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/**
 * Checks an endpoint URL as given (no DNS): an absolute `https://` URL (or `http://` when
 * `allowInsecure`), no credentials, no fragment, at most MAX_WEBHOOK_URL characters; a host that is
 * an IP literal must be public unless `allowInsecure`. A name is checked where it resolves, at
 * each delivery (see `guardedLookup`), so a name that later points inside is refused then too.
 * Returns the reason it is refused, or undefined.
 */
export function webhookUrlProblem(raw: string, allowInsecure: boolean): string | undefined {
  if (raw.length > MAX_WEBHOOK_URL) return `must be at most ${MAX_WEBHOOK_URL} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowInsecure && url.protocol === 'http:')) return allowInsecure ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.hash) return 'must not have a fragment';
  // Brackets of an IPv6 literal and the root's trailing dot ('localhost.') do not change the host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (!allowInsecure) {
    if (ipaddr.isValid(host) && !isPublicAddress(host)) return 'must not point at a loopback, private, link-local or reserved address';
    if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at a loopback, private, link-local or reserved address';
  }
  return undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s) requests that refuses a host resolving to any non-public address (every
 * address is checked, and the connection is made to a checked one: no second resolution to
 * rebind). With `allowInsecure` it is the system lookup.
 */
export function guardedLookup(allowInsecure: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number | string }, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      if (!allowInsecure) {
        const inside = list.find((a) => !isPublicAddress(a.address));
        if (inside || list.length === 0) {
          const refused = Object.assign(new Error(`${hostname} resolves to ${inside?.address ?? 'nothing'}, which webhooks may not reach`), { code: 'WEBHOOK_ADDRESS_REFUSED' });
          return callback(refused, '');
        }
      }
      if (options.all) return callback(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
