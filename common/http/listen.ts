import uws, { type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';

export interface Listening {
  port: number;
  /** Stops accepting connections; open connections are left to their owner to close. */
  close(): void;
}

/** Listens on host:port (0 picks a free port) and resolves once the socket is bound. */
export function listen(app: TemplatedApp, host: string, port: number): Promise<Listening> {
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
