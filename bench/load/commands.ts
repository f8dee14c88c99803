import type { ConnSpec } from './systems.ts';

/** One HTTP request of a closed-loop run. */
export interface HttpRequest {
  origin: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** Timing shared by every phase: all workers start at `start` (epoch ms) and measure after the warmup. */
interface Timed {
  start: number;
  warmupMs: number;
  durationMs: number;
}

/** What the parent tells a generator process to do. */
export type Command =
  | { op: 'open'; conns: ConnSpec[]; concurrency: number }
  | (Timed & { op: 'fanout'; ratePerSender: number; drainMs: number; quietMs: number; /** Text after each send's time: contents[n % length] (JSON-safe). */ contents?: string[] })
  | (Timed & { op: 'sends'; window: number; content: string; /** When given, send n carries contents[n % length] (JSON-safe text) instead of `content`. */ contents?: string[]; drainMs: number; perSender?: number; collectIdsEvery?: number })
  | (Timed & { op: 'http'; requests: HttpRequest[]; concurrency: number })
  | { op: 'close' };

export interface Opened {
  op: 'opened';
  opened: number;
  failed: number;
  /** Failure reasons and how often each happened. */
  errors: Record<string, number>;
  ms: number;
}

export interface WorkerResult {
  op: 'result';
  sent: number;
  /** Sent within the measured window. */
  measuredSent: number;
  delivered: number;
  /** Fanout: deliveries of measured messages; sends: acks of measured sends; http: 2xx answers to measured requests. */
  measuredDelivered: number;
  acked: number;
  /** Acks of measured sends (fanout and sends over WebSocket). */
  measuredAcked: number;
  /** Sends answered with an error frame (refused), in the whole run. */
  errors: number;
  /** Measured sends refused, by the error's code. */
  refused: Record<string, number>;
  /** Time from each measured send's intended send time to its refusal (µs), encoded. */
  refusalHistogram: string;
  /** Measured sends that got neither an ack nor an error by the end of the drain (timeouts). */
  unanswered: number;
  /** Fanout: how late each measured send left the generator after its intended time (µs), encoded. */
  sendLagHistogram: string;
  /** Message ids kept while sending (history cursors). */
  ids: string[];
  statuses?: Record<string, number>;
  histogram: string;
  cpuSeconds: number;
  /** Connections still open at the end. */
  open: number;
}
