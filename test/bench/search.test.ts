import t from 'tap';
import { bench } from '../helpers/bench.ts';
import { checkOutputs } from './smoke-checks.ts';

t.test('search smoke: send cost with and without the index, then a user searching a rare, a common and two words', async (t) => {
  const run = await bench(['search', '--smoke', '--workers', '1', '--messages', '600', '--chats', '12', '--member-of', '4', '--rate', '100']);
  t.teardown(run.cleanup);
  checkOutputs(t, run, 'search', ['search']);
  const { rows, summary, parameters } = run.result('search');
  t.same([parameters.messages, parameters.chats, parameters.memberOf], [600, 12, 4]);
  const cost = rows.filter((r) => r.part === 'send cost');
  t.same(cost.map((r) => r.searchIndex), ['on', 'off']);
  for (const r of cost) t.ok(Number(r.serverCpuUsPerSend) > 0, `SEARCH_INDEX=${r.searchIndex}: CPU per send measured`);
  const queries = rows.filter((r) => r.part === 'query');
  t.same(queries.map((r) => r.query), ['rare', 'common', 'twoWordsPrefix']);
  for (const r of queries) {
    t.ok(Number(r.queriesPerSecond) > 0, `${r.query}: searches served`);
    t.equal(r.errors, 0);
  }
  const common = queries.find((r) => r.query === 'common')!;
  t.equal(common.hitsOnFirstPage, 20, 'the common word fills a page');
  t.match(summary, { sendCost: { ratio: Number, goal: { want: '<= 1.3' } }, embedded: { messages: 600, disk: { searchBytesPerMessage: Number }, goal: { p99BelowMs: 50 } } });
});
