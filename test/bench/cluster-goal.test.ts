import t from 'tap';
import { haVsSingleGoal, stretchGoal, uwsBound } from '../../bench/scenarios/cluster.ts';

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

// `cluster --topology ha`: the replicated topology's highest rate ÷ the single one's, goal ≥ 0.5.
t.test('ha ÷ single meets the goal only as a measured ratio or a lower bound over it', async (t) => {
  const system = (maxRate: number, capped = false) => ({ maxRate, maxDeliveredPerSecond: maxRate * 24, capped, atMax: undefined, at70: undefined, overload: undefined });
  const want = "≥ 0.5× the single topology's highest rate (≥ 1,928 msgs/s in this run)";
  t.same(haVsSingleGoal(system(3855), system(2570)), { want, got: 0.667, single: 3855, ha: 2570, met: true }, 'both sweeps failed: a measured ratio over the goal');
  t.same(haVsSingleGoal(system(3855), system(1142)), { want, got: 0.296, single: 3855, ha: 1142, met: false }, 'one under it');
  t.same(haVsSingleGoal(system(3855), system(2570, true)), { want, got: '≥ 0.667', single: 3855, ha: 2570, met: true }, 'the ha sweep never failed: a lower bound, over the goal');
  t.same(haVsSingleGoal(system(3855, true), system(2570)), { want, got: '≤ 0.667', single: 3855, ha: 2570, met: false }, 'the single sweep never failed: an upper bound, never met');
  t.match(haVsSingleGoal(system(20, true), system(20, true)), { got: /neither sweep failed/, met: false }, 'a fixed rate both passed measures no ratio');
  t.same(haVsSingleGoal(system(3855), system(0)), { want, got: 0, single: 3855, ha: 0, met: false }, 'nothing passed on the ring');
  t.same(haVsSingleGoal(system(0), system(500)), { want: "≥ 0.5× the single topology's highest rate", got: null, single: 0, ha: 500, met: false }, 'nothing passed on the single topology: no ratio');
  t.same(haVsSingleGoal(undefined, system(500)), { want: "≥ 0.5× the single topology's highest rate", got: null, single: null, ha: 500, met: false }, 'no single run');
});
