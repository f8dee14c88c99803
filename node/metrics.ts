import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { ServiceMetrics } from '../common/index.ts';
import type { StoreWriteStats } from './store/index.ts';

/** A counter whose total is kept elsewhere (the event loop, LMDB), read at each scrape. */
function totalOf(name: string, help: string, registers: ServiceMetrics['registry'][], read: () => number | undefined): void {
  new Counter({
    name,
    help,
    registers,
    collect() {
      const total = read();
      if (total === undefined) return;
      this.reset();
      this.inc(total);
    },
  });
}

/**
 * The node's own metrics, registered beside the process and HTTP ones. `storeStats` gives the
 * embedded store's write counters; the three `chat_store_*_total` series exist only where it does.
 */
export function nodeMetrics(base: ServiceMetrics, actorCount: () => number, storeStats: () => StoreWriteStats | undefined = () => undefined) {
  const registers = [base.registry];
  // rate() of it is the share of time the node's one thread was busy: JavaScript, and the system
  // calls made from it (each socket write is one), GC pauses included.
  totalOf('chat_event_loop_busy_seconds_total', "Seconds the node's event loop was busy (not waiting for I/O) since it started", registers, () => performance.eventLoopUtilization().active / 1000);
  if (storeStats()) {
    totalOf('chat_store_transactions_total', 'Write transactions the embedded store committed, each synced to disk', registers, () => storeStats()?.transactions);
    totalOf('chat_store_pages_written_total', 'Database pages (4 KiB) the embedded store wrote', registers, () => storeStats()?.pagesWritten);
    totalOf('chat_store_transaction_seconds_total', "Seconds the embedded store spent in write transactions, from each one's start to the end of its commit (its sync included)", registers, () => storeStats()?.transactionSeconds);
  }
  const connections = new Gauge({ name: 'chat_ws_connections', help: 'Open WebSocket connections', registers });
  const messagesIn = new Counter({ name: 'chat_messages_in_total', help: 'Messages accepted (acknowledged) by this node', registers });
  const actionsIn = new Counter({ name: 'chat_ws_actions_total', help: 'WebSocket actions received', labelNames: ['type'], registers });
  const eventsOut = new Counter({ name: 'chat_events_out_total', help: 'Event deliveries handed to sockets (subscribers per publish)', registers });
  const dropped = new Counter({ name: 'chat_ws_slow_consumers_dropped_total', help: 'Sockets closed because their send buffer passed the limit', registers });
  const shed = new Counter({ name: 'chat_sends_shed_total', help: 'Sends refused at once because this node was overloaded (RATE_LIMITED)', registers });
  const busy = new Counter({ name: 'chat_writes_refused_busy_total', help: "Writes refused at once because their chat's queue was too long or its oldest write too old (RATE_LIMITED)", registers });
  new Gauge({ name: 'chat_actors', help: 'Chat actors in memory', registers, collect() { this.set(actorCount()); } });
  const ack = new Histogram({
    name: 'chat_ack_latency_seconds',
    help: 'From a write entering its chat actor to it being durable',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const write = new Histogram({
    name: 'chat_store_write_seconds',
    help: 'How long one batch of message writes (a group commit) took in the store',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  return {
    observeWrite: (seconds: number) => write.observe(seconds),
    connections: (delta: number) => connections.inc(delta),
    actionIn: (type: string) => actionsIn.inc({ type }),
    slowConsumerDropped: () => dropped.inc(),
    shed: () => shed.inc(),
    busyRefused: () => busy.inc(),
    eventOut: (n: number) => eventsOut.inc(n),
    observeAck: (seconds: number) => {
      ack.observe(seconds);
      messagesIn.inc();
    },
  };
}
