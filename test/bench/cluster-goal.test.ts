import t from 'tap';
import { stretchGoal } from '../../bench/scenarios/cluster.ts';

// The cluster report's stretch goal (this service's highest rate ÷ uws's). A uws sweep that never
// failed gives only a lower bound for uws, so the ratio is an upper bound and proves nothing met.
t.test('the stretch goal is met only by a ratio against a highest rate uws actually reached', async (t) => {
  t.same(stretchGoal(0.667, false), { want: 0.5, got: 0.667, met: true }, 'a measured ratio over the goal meets it');
  t.same(stretchGoal(0.37, false), { want: 0.5, got: 0.37, met: false }, 'one under it does not');
  t.same(stretchGoal(0.667, true), { want: 0.5, got: '≤ 0.667', met: false }, 'against a uws sweep that never failed the ratio is an upper bound: shown as such, not met');
  t.same(stretchGoal(null, false), { want: 0.5, got: null, met: false }, 'no ratio, not met');
});
