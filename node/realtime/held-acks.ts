import type { WebSocket } from 'uWebSockets.js';

/**
 * Acknowledgements held to the end of the current turn, then written one write per socket.
 *
 * Why: a chat's group commit resolves a batch of sends at once (a sender keeps up to its window in
 * flight), and each ack written by itself is one socket write, while a write costs far more in the
 * kernel than the bytes it carries. Held until the turn's promise continuations have all run
 * (process.nextTick scheduled from one of them runs after the whole microtask queue), a socket's
 * acks leave corked: in one write, together with the events uWS holds for it.
 *
 * Order: uWS writes a socket's pending topic frames before any frame sent to it directly. The hub
 * calls flush() before it publishes, sends any other frame, or closes a socket, so every frame
 * reaches a socket in the order it was given, as when each was written at once.
 */
export class HeldAcks<S extends { closed: boolean }> {
  private held = new Map<WebSocket<S>, (string | Buffer)[]>();
  private scheduled = false;

  /** `write` sends one frame to an open socket (the hub's: it marks a socket past its backpressure limit as slow). */
  constructor(private readonly write: (ws: WebSocket<S>, data: string | Buffer) => void) {}

  add(ws: WebSocket<S>, data: string | Buffer): void {
    const frames = this.held.get(ws);
    if (frames) frames.push(data);
    else this.held.set(ws, [data]);
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(this.flush);
    }
  }

  /** Writes every held frame now, each socket's in one corked write; a socket closed meanwhile gets none. */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.held.size === 0) return;
    const held = this.held;
    // Swapped first: a write that closes a socket runs the hub's close path, which may flush again.
    this.held = new Map();
    for (const [ws, frames] of held) {
      if (ws.getUserData().closed) continue;
      if (frames.length === 1) this.write(ws, frames[0]!);
      else
        ws.cork(() => {
          for (const data of frames) if (!ws.getUserData().closed) this.write(ws, data);
        });
    }
  };
}
