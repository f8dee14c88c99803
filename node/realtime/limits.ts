/** Limits of the WebSocket endpoint; documented in the README's protocol section. */
export const REALTIME_LIMITS = Object.freeze({
  /** Largest frame a client may send; a larger one gets a FRAME_TOO_LARGE error frame. */
  maxFrameBytes: 64 * 1024,
  /** Frames past this are not even read: uWS closes the socket at once (1009/1006). */
  hardFrameBytes: 1024 * 1024,
  /**
   * Slow consumers. A socket whose unsent bytes exceed `slowConsumerBytes` at a check (every
   * `slowConsumerCheckMs`, and after every `slowConsumerCheckBytes` the node sends) is closed with
   * 4001 and counted. Since no buffer grows by more than `slowConsumerCheckBytes` between checks,
   * the hard `maxBackpressureBytes` (uWS closes at once, 1006) is a backstop that a stopped reader
   * does not reach. A reader that cannot keep up costs bounded memory and reconnects with resume.
   */
  slowConsumerBytes: 256 * 1024,
  slowConsumerCheckMs: 500,
  slowConsumerCheckBytes: 1024 * 1024,
  maxBackpressureBytes: 2 * 1024 * 1024,
  connectionsPerUser: 16,
  /** Frames (and bytes) a socket may send before its admission check (the tier's ceiling) answers; past either, it is closed (4002). */
  earlyFrames: 64,
  earlyBytes: 256 * 1024,
  /**
   * Connections that ignore rate-limit hints. Once an action is refused by a connection-wide limit
   * (WS_ACTIONS_PER_SECOND, APP_ACTIONS_PER_SECOND) with `retryAfter`, the connection is told to
   * wait; frames arriving within `ignoredHintGraceMs` were already on their way, but after that
   * every action sent before the wait is over is a strike, and at `ignoredHintsMax` strikes the
   * socket is closed with 4029. The user's next upgrades on this node are refused 429 for
   * `ignoredHintCooldownMs`, doubled for each repeat within `ignoredHintMemoryMs`, at most
   * `ignoredHintCooldownMaxMs`. Refusing costs a node a few microseconds per frame; not reading a
   * closed socket's frames costs nothing, which is what keeps one tenant's flood from delaying others.
   */
  ignoredHintGraceMs: 250,
  /** The least wait a connection-wide refusal asks for; the hint is this (or what the limit needs) times 1–2, at random. */
  minHintSeconds: 0.5,
  ignoredHintsMax: 20,
  ignoredHintCooldownMs: 30_000,
  ignoredHintCooldownMaxMs: 15 * 60_000,
  ignoredHintMemoryMs: 10 * 60_000,
  /** How often sockets whose JWT has expired are looked for and closed with 4100. */
  expiryCheckMs: 1000,
  /** Messages a reconnect replays per chat before it says "page history" instead. */
  resumeMessages: 500,
  /** Threads one connection may have open (`thread.open`, `?threads=`): past it, OPEN_THREAD_LIMIT_REACHED. */
  openThreads: 20,
  /** Chats one resume may name (`?resume=`); more is refused VALIDATION_FAILED. */
  resumeChats: 1000,
  /** How long a resuming socket waits for a chat's replay from its owner before it is told to page history. */
  replayWaitMs: 5_000,
  /**
   * Seconds without a frame either way before uWS closes a socket. uWS pings every socket well
   * within it (sendPingsAutomatically), so a live client's pong keeps it open and a dead peer is
   * found within this time.
   */
  idleTimeoutSeconds: 120,
});
