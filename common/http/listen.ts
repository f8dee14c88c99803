import uws, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';

export interface Listening {
  port: number;
  /** Stops accepting connections; open connections are left to their owner to close. */
  close(): void;
}

/**
 * Listens on host:port (0 picks a free port) and resolves once the socket is bound. A fixed port can
 * still be held for a moment by the closing connections of a previous instance (a restart after a
 * crash), so binding is retried for up to `retryForMs` before giving up.
 */
export async function listen(app: TemplatedApp, host: string, port: number, retryForMs = 10_000): Promise<Listening> {
  const deadline = Date.now() + retryForMs;
  for (;;) {
    try {
      return await listenOnce(app, host, port);
    } catch (error) {
      if (port === 0 || Date.now() >= deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function listenOnce(app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket: us_listen_socket | false) => {
      if (!socket) {
        reject(new Error(`cannot listen on ${host}:${port} (in use or not permitted)`));
        return;
      }
      let open = true;
      resolve({
        port: uws.getSocketPort(socket),
        close: () => {
          if (open) uws.closeSocket(socket);
          open = false;
        },
      });
    });
  });
}

/** Closes every socket of the app (listen sockets and connections). Present at runtime, absent from the typings. */
export function closeApp(app: TemplatedApp): void {
  (app as TemplatedApp & { close(): void }).close();
}
