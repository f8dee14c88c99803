/** Limits of the WebSocket endpoint; documented in the README's protocol section. */
export const REALTIME_LIMITS = Object.freeze({
  /** Largest frame a client may send; uWS closes the socket (1009) on a larger one. */
  maxFrameBytes: 64 * 1024,
  /** Bytes queued for one socket before it is dropped as a slow consumer (close 4001 or 1006). */
  maxBackpressureBytes: 1024 * 1024,
  connectionsPerUser: 16,
  /** Messages a reconnect replays per chat before it says "page history" instead. */
  resumeMessages: 500,
});
