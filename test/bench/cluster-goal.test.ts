import t from 'tap';
import { stretchGoal, uwsBound } from '../../bench/scenarios/cluster.ts';

// The cluster report's stretch goal (this service's highest rate ÷ uws's). A uws sweep that never
// failed gives only a lower bound for uws, so the ratio is an upper bound and proves nothing met.
t.test('the stretch goal is met only by a ratio against a highest rate uws actually reached', async (t) => {
  t.same(stretchGoal(0.667, false), { want: 0.5, got: 0.667, met: true }, 'a measured ratio over the goal meets it');
  t.same(stretchGoal(0.37, false), { want: 0.5, got: 0.37, met: false }, 'one under it does not');
  t.same(stretchGoal(0.667, true), { want: 0.5, got: '≤ 0.667', met: false }, 'against a uws sweep that never failed the ratio is an upper bound: shown as such, not met');
  t.same(stretchGoal(null, false), { want: 0.5, got: null, met: false }, 'no ratio, not met');
});

// When uws's sweep never failed, its overload run (offered twice the sweep's top) is evidence of
// what uws sustains if it passed too, and gives a tighter bound on the ratio.
t.test("uws's overload run tightens the bound when its sweep never failed", async (t) => {
  const system = (maxDeliveredPerSecond: number, capped: boolean, overload?: { deliveredPerSecond: number; ok: boolean }) => ({ maxRate: 1, maxDeliveredPerSecond, capped, atMax: undefined, at70: undefined, overload });
  const chat = system(138_797, false);
  t.same(uwsBound(chat, system(208_200, true, { deliveredPerSecond: 416_395, ok: true })), { ratio: 0.333, upperBound: true }, 'a passing overload run is the better bound');
  t.same(uwsBound(chat, system(208_200, true, { deliveredPerSecond: 416_395, ok: false })), { ratio: 0.667, upperBound: true }, 'a failing one is no evidence');
  t.same(uwsBound(chat, system(208_200, true)), { ratio: 0.667, upperBound: true }, 'no overload run: the sweep alone');
  t.same(uwsBound(chat, system(277_594, false, { deliveredPerSecond: 555_188, ok: true })), { ratio: 0.5, upperBound: false }, 'a sweep that failed measured uws: its top is the figure');
  t.same(uwsBound(chat, undefined), { ratio: null, upperBound: false }, 'no uws run, no ratio');
  t.same(stretchGoal(0.333, true), { want: 0.5, got: '≤ 0.333', met: false }, 'an upper bound under the goal: not met');
});
