import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { haProcess } from '../helpers/nemesis/harness.ts';
import { requireHaTopology } from '../helpers/services.ts';

/**
 * scripts/services.sh starts every Cassandra JVM with a timer slack of CASSANDRA_TIMER_SLACK_NS
 * (1 ms by default) on all its threads: without it the ring's idle request workers, which wait for
 * work in sleeps of 10 µs, cost about a third of the CPU the three JVMs spend under load on two
 * cores (bench/micro/cassandra-writes.ts; the README's "A replicated topology on one machine" has the figures). Checked on the running ring, thread
 * by thread, since a thread the JVM starts inherits the slack of the one that starts it.
 */
const ha = await requireHaTopology((line) => t.comment(line));
if (!ha) t.plan(0, 'the replicated topology is not running');
else {
  const want = Number(process.env.CASSANDRA_TIMER_SLACK_NS ?? 1_000_000);
  const port = Number(ha.cassandra.split(',')[0]!.split(':')[1] ?? 9042);
  for (const host of ha.cassandraAddresses) {
    t.test(`Cassandra at ${host}: every thread has a timer slack of ${want} ns`, (t) => {
      const { pid } = haProcess(host, port, 'cassandra');
      const slacks = new Map<number, number>();
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          const slack = Number(readFileSync(`/proc/${tid}/timerslack_ns`, 'utf8').trim());
          slacks.set(slack, (slacks.get(slack) ?? 0) + 1);
        } catch {
          /* the thread ended between the two reads */
        }
      }
      t.ok([...slacks.values()].reduce((a, b) => a + b, 0) > 20, 'the JVM has its threads');
      t.same(Object.fromEntries(slacks), { [want]: [...slacks.values()].reduce((a, b) => a + b, 0) }, 'threads by timer slack');
      t.end();
    });
  }
}
