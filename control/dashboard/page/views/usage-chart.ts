import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Usage } from '../data.ts';

/**
 * Messages per day (bars, left axis) and peak connected users per day (line, right axis) over the
 * last 30 days, drawn by uPlot on a canvas. A canvas says nothing to a screen reader, so the
 * figure carries a summary and the same figures follow as a table.
 */

const HEIGHT = 240;
const HALF_DAY = 43_200;
/** Below this width the axes drop their titles (the legend names the series) to leave room for the plot. */
const COMPACT_WIDTH = 520;
const seconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
const widthOf = (element: HTMLElement) => Math.max(240, element.clientWidth);

function options(width: number): uPlot.Options {
  const bars = uPlot.paths.bars?.({ size: [0.6, 24] });
  const compact = width < COMPACT_WIDTH;
  const atLeastFive = (_u: uPlot, _min: number, max: number): uPlot.Range.MinMax => [0, Math.max(5, max)];
  return {
    width,
    height: HEIGHT,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    cursor: { drag: { x: false, y: false } },
    scales: {
      // Half a day of room at each end, so the first and last days' bars are drawn whole.
      x: { time: true, range: (_u, min, max) => [min - HALF_DAY, max + HALF_DAY] },
      messages: { range: atLeastFive },
      users: { range: atLeastFive },
    },
    series: [
      { label: 'Day (UTC)', value: '{YYYY}-{MM}-{DD}' },
      { label: 'Messages', scale: 'messages', stroke: '#2f6fdf', fill: 'rgba(47,111,223,0.35)', width: 1, ...(bars ? { paths: bars } : {}), points: { show: false } },
      { label: 'Peak users', scale: 'users', stroke: '#c2410c', width: 2, points: { size: 5 } },
    ],
    axes: [
      { values: '{MM}-{DD}', space: 48 },
      { scale: 'messages', size: compact ? 36 : 56, ...(compact ? {} : { label: 'Messages' }) },
      { scale: 'users', side: 1, size: compact ? 36 : 56, grid: { show: false }, ...(compact ? {} : { label: 'Peak users' }) },
    ],
  };
}

export function UsageChart({ days }: { days: Usage['days'] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const data: uPlot.AlignedData = [days.map((d) => seconds(d.day)), days.map((d) => d.messages), days.map((d) => d.peakUsers)];

  useEffect(() => {
    const element = box.current!;
    const draw = () => {
      plot.current?.destroy();
      plot.current = new uPlot(options(widthOf(element)), data, element);
    };
    draw();
    // The chart follows its box's width (a phone turned sideways, a window resized); crossing
    // COMPACT_WIDTH changes the axes, which uPlot sets only when a chart is made.
    const resize = new ResizeObserver(() => {
      const width = widthOf(element);
      if (!plot.current || plot.current.width === width) return;
      if (plot.current.width < COMPACT_WIDTH !== width < COMPACT_WIDTH) draw();
      else plot.current.setSize({ width, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, []);
  useEffect(() => plot.current?.setData(data), [days]);

  const total = days.reduce((sum, d) => sum + d.messages, 0);
  const busiest = days.reduce((best, d) => (d.messages > best.messages ? d : best), days[0] ?? { day: '', messages: 0, peakUsers: 0 });
  const peak = days.reduce((max, d) => Math.max(max, d.peakUsers), 0);
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const summary =
    `Last 30 days: ${count(total, 'message', 'messages')}` +
    (total > 0 ? `, most on ${busiest.day} (${busiest.messages})` : '') +
    `; at most ${count(peak, 'user', 'users')} connected at once.`;
  return html`<figure class="chart">
    <figcaption>Messages and peak connected users per day (UTC)</figcaption>
    <div class="chart-box" ref=${box} role="img" aria-label=${summary}></div>
    <p class="muted">${summary}</p>
    <details>
      <summary>Daily figures as a table</summary>
      <div class="table-wrap">
        <table class="days">
          <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Messages</th><th scope="col">Peak users</th></tr></thead>
          <tbody>
            ${[...days].reverse().map((d) => html`<tr key=${d.day}><td>${d.day}</td><td>${d.messages}</td><td>${d.peakUsers}</td></tr>`)}
          </tbody>
        </table>
      </div>
    </details>
  </figure>`;
}
