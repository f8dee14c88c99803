export { WindowLimiter, type LimitDecision } from './window-limiter.ts';
export { LOAD_SHEDDING, LoadShedder, type LagSource, type LoadShedderOptions } from './load-shedder.ts';
