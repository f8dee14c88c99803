import t from 'tap';
import { channelOf, MemoryBroker, MemoryBus } from '../../node/bus/index.ts';
import { busConformance } from './bus-conformance.ts';

busConformance(t, 'memory', async (n) => {
  const broker = new MemoryBroker();
  const buses = Array.from({ length: n }, (_, i) => new MemoryBus(broker, `node-${i}`));
  return {
    buses,
    subscribers: async (topic) => broker.subscribers(channelOf('', topic)),
    close: async () => void (await Promise.all(buses.map((b) => b.close()))),
  };
});
