export { channelOf, type Bus, type BusHandler, type BusTopic } from './bus.ts';
export { ENVELOPE_VERSION } from './envelope.ts';
export { MemoryBroker, MemoryBus } from './memory-bus.ts';
export { RedisBus, type RedisBusOptions } from './redis-bus.ts';
export { ownerOf } from './placement.ts';
