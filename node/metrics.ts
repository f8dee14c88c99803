import { Counter, Gauge, Histogram } from 'prom-client';
import type { ServiceMetrics } from '../common/index.ts';

/** The node's own metrics, registered beside the process and HTTP ones. */
export function nodeMetrics(base: ServiceMetrics, actorCount: () => number) {
  const registers = [base.registry];
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
