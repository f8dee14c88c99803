import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoopbackTlsPeer } from './loopback-tls.ts';

/**
 * What a node needs to push to the tests' own peers: their certificates trusted
 * (NODE_EXTRA_CA_CERTS, read by Node at start), loopback let through, and APNs and FCM at the
 * peers' origins (PUSH_APNS_ORIGIN, PUSH_FCM_ORIGIN).
 */
export function pushPeersEnv(peers: { webPush?: LoopbackTlsPeer; apns?: LoopbackTlsPeer; fcm?: LoopbackTlsPeer }): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'push-ca-'));
  const file = join(dir, 'ca.pem');
  writeFileSync(file, [peers.webPush, peers.apns, peers.fcm].filter((p) => p !== undefined).map((p) => p.ca).join('\n'));
  return {
    NODE_EXTRA_CA_CERTS: file,
    PUSH_ALLOW_LOOPBACK: 'true',
    ...(peers.apns ? { PUSH_APNS_ORIGIN: peers.apns.origin } : {}),
    ...(peers.fcm ? { PUSH_FCM_ORIGIN: peers.fcm.origin } : {}),
  };
}

/** Resolves once `check` holds (polled every 20 ms), or rejects after `ms` with `what`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
