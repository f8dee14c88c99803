import { createServer } from 'node:net';
import uws, { type RecognizedString, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import { ListenError } from '../errors/index.ts';
import { recordBoundPort } from './bound-port.ts';

export interface Listening {
  port: number;
  /** Stops accepting connections; open connections are left to their owner to close. */
  close(): void;
}

/**
 * uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT (`ListenOptions` in the typings, absent at runtime): bind
 * without SO_REUSEPORT. Without it a second process binds the same port too and the kernel splits
 * the connections between the two, silently, even when they hold different keys and data.
 */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** `listen(host, port, options, cb)`: in uWS.js at runtime, missing from its typings. */
type ListenWithOptions = (host: RecognizedString, port: number, options: number, cb: (socket: us_listen_socket | false) => void) => TemplatedApp;

/**
 * Listens on host:port (0 picks a free port) and resolves once the socket is bound.
 *
 * Guarantees:
 * - the port is this process's alone: a port another socket listens on is never shared (no
 *   SO_REUSEPORT); SO_REUSEADDR stays, so a restart is not blocked by the previous instance's
 *   connections in TIME_WAIT;
 * - a port in use is tried again for up to `retryForMs` (an instance being replaced may still be
 *   exiting), then the promise rejects with ListenError `PORT_IN_USE` naming host and port;
 * - any other failure (address not available, permission denied) rejects at once with ListenError
 *   `LISTEN_FAILED` and the operating system's reason.
 */
export async function listen(app: TemplatedApp, host: string, port: number, retryForMs = 10_000): Promise<Listening> {
  const deadline = Date.now() + retryForMs;
  for (;;) {
    const listening = await listenOnce(app, host, port);
    if (listening) return listening;
    // uWS reports no reason; a plain node:net bind of the same address tells it.
    const reason = await bindError(host, port);
    // Undefined: the port was freed in between (an instance finished exiting), so try again too.
    if ((reason === 'EADDRINUSE' || reason === undefined) && port !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    if (reason === 'EADDRINUSE') throw new ListenError('PORT_IN_USE', host, port);
    throw new ListenError('LISTEN_FAILED', host, port, reason ?? 'refused by uWS for a reason it does not report');
  }
}

function listenOnce(app: TemplatedApp, host: string, port: number): Promise<Listening | undefined> {
  return new Promise((resolve) => {
    (app.listen as unknown as ListenWithOptions).call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (!socket) {
        resolve(undefined);
        return;
      }
      let open = true;
      const bound = uws.getSocketPort(socket);
      recordBoundPort(app, bound);
      resolve({
        port: bound,
        close: () => {
          if (open) uws.closeSocket(socket);
          open = false;
        },
      });
    });
  });
}

/** The error code (EADDRINUSE, EACCES, EADDRNOTAVAIL…) of binding host:port now; undefined if it binds (then released at once). */
function bindError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/** Closes every socket of the app (listen sockets and connections). Present at runtime, absent from the typings. */
export function closeApp(app: TemplatedApp): void {
  (app as TemplatedApp & { close(): void }).close();
}
