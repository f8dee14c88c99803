import { ApiError } from '../../common/index.ts';

/** How loaded one chat's actor is when a new write arrives. */
export interface ActorLoad {
  /** Operations queued behind each other, and writes queued or being written. */
  queued: number;
  /** How long the oldest write not yet durable has waited (ms); 0 when none. */
  oldestWaitMs: number;
}

/**
 * Decides whether a chat's actor takes one more write (send, edit, delete, reaction), so that
 * queues stay bounded and latency with them: under overload the excess is refused at once with
 * RATE_LIMITED and a retry hint, instead of waiting in a queue until it times out.
 */
export interface AdmissionPolicy {
  admit(load: ActorLoad): ApiError | undefined;
}

export interface QueueLimits {
  /** Writes an actor holds at most (queued or in flight): a bound on its memory. */
  maxQueued: number;
  /**
   * Refuse while the oldest write has waited longer than this (ms), with at least `floor` writes
   * waiting: a bound on latency. 100 rather than 300: on the cluster bench offered 11,566 msgs/s
   * (twice its highest rate), 300 ms let the nodes take more than they could serve in time and
   * the delivered p99 was 772 and 871 ms in two runs, 150 ms gave 484-585 ms in four, 100 ms 462
   * and 498 in two (and a lower median: 115-121 ms against 145-198), still delivering about
   * 1.5 times the highest rate.
   */
  maxWaitMs: number;
  /**
   * Below this many writes waiting, the delay bound refuses nothing: a stall of the database (a
   * fresh Cassandra's first minutes, a commit-log sync) makes a quiet chat's writes wait too, and
   * refusing one of a handful relieves nothing. A chat that is really overloaded has hundreds.
   */
  floor: number;
}

export const ACTOR_QUEUE_LIMITS: Readonly<QueueLimits> = Object.freeze({ maxQueued: 2048, maxWaitMs: 100, floor: 32 });

/** The default policy: a bounded queue and a bounded queueing delay per chat. */
export function boundedQueue(limits: Readonly<QueueLimits> = ACTOR_QUEUE_LIMITS): AdmissionPolicy {
  return {
    admit: ({ queued, oldestWaitMs }) => {
      if (queued < limits.maxQueued && (queued < limits.floor || oldestWaitMs <= limits.maxWaitMs)) return undefined;
      return new ApiError('RATE_LIMITED', 'this chat is busy: retry shortly', { retryAfterSeconds: 1 });
    },
  };
}

/** `policy`, calling `refused` for each write it refuses (the node's metrics count them). */
export function countedRefusals(policy: AdmissionPolicy, refused: () => void): AdmissionPolicy {
  return {
    admit: (load) => {
      const refusal = policy.admit(load);
      if (refusal) refused();
      return refusal;
    },
  };
}
