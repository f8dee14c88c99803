/**
 * A fixed clock for store conformance suites: every time is explicit, so a suite never depends on
 * the wall clock, and each implementation sees exactly the same instants.
 */
export const T0 = Date.parse('2030-01-01T00:00:00.000Z');
export const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
export const NOW = at(0);
export const LATER = at(60);
export const FAR = at(30 * 24 * 3600);
export const PAST = at(-3600);
