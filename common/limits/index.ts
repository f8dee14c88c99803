export { WindowLimiter, type LimitDecision } from './window-limiter.ts';
