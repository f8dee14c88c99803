/** Limits of the WebSocket endpoint; documented in the README's protocol section. */
export const REALTIME_LIMITS = Object.freeze({
  /** Largest frame a client may send; uWS closes the socket (1009) on a larger one. */
  maxFrameBytes: 64 * 1024,
  /**
   * Slow consumers. A socket whose unsent bytes exceed `slowConsumerBytes` at a check (every
   * `slowConsumerCheckMs`) is closed with 4001 and counted; one that reaches `maxBackpressureBytes`
   * between checks is closed by uWS at once (1006). Either way a reader that cannot keep up costs
   * at most `maxBackpressureBytes` of memory, and reconnects with resume.
   */
  slowConsumerBytes: 256 * 1024,
  slowConsumerCheckMs: 500,
  maxBackpressureBytes: 2 * 1024 * 1024,
  connectionsPerUser: 16,
  /** Messages a reconnect replays per chat before it says "page history" instead. */
  resumeMessages: 500,
});
