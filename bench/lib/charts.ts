import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Row } from './output.ts';

/** Renders a Vega-Lite spec to SVG text, headless (no browser, no canvas). */
async function render(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

const COLORS = { domain: ['chat', 'uws', 'socketio'], range: ['#2f6fdf', '#7a7a7a', '#e8892b'] };

/** Lines of `y` against `x`, one per system (log scales where asked). */
export function lineChart(rows: Row[], o: { title: string; x: string; xTitle: string; y: string; yTitle: string; logX?: boolean; logY?: boolean; series?: string }): Promise<string> {
  return render({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: o.title,
    width: 520,
    height: 300,
    data: { values: rows.filter((r) => typeof r[o.y] === 'number' && Number(r[o.y]) > 0) },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: o.x, type: 'quantitative', title: o.xTitle, scale: o.logX ? { type: 'log' } : {} },
      y: { field: o.y, type: 'quantitative', title: o.yTitle, scale: o.logY ? { type: 'log' } : {} },
      color: o.series ? { field: o.series, type: 'nominal' } : { field: 'system', type: 'nominal', scale: COLORS },
    },
  } as TopLevelSpec);
}

/** Bars of `y` per system, grouped by `group` where given. */
/** Bars per system (in the systems' colours), or per `x` when the bars are something else (one colour, in row order). */
export function barChart(rows: Row[], o: { title: string; y: string; yTitle: string; group?: string; x?: string }): Promise<string> {
  const bySystem = o.x === undefined;
  return render({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: o.title,
    width: o.group ? 140 : 300,
    height: 260,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      x: bySystem ? { field: 'system', type: 'nominal', title: null, sort: COLORS.domain } : { field: o.x, type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
      y: { field: o.y, type: 'quantitative', title: o.yTitle },
      color: bySystem ? { field: 'system', type: 'nominal', scale: COLORS, legend: null } : { value: COLORS.range[0] },
      ...(o.group ? { column: { field: o.group, type: 'nominal', title: null } } : {}),
    },
  } as TopLevelSpec);
}
