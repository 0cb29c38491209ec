// A daily time series drawn with uPlot (MIT; about 20 KB gzipped, canvas) as one bar per UTC day:
// the axis ticks fall on whole days and whole counts only, as the data does. The canvas is
// described for screen readers, and the same numbers are available as a table.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const DAY = 86_400;
/** Tick steps of the time axis: whole days and weeks, never hours. */
const DAY_STEPS = [1, 2, 7, 14, 28].map((d) => d * DAY);
/** Tick steps of the count axis: 1, 2, 5, 10, 20, 50, ... (never a fraction of a scan). */
const COUNT_STEPS = Array.from({ length: 30 }, (_, i) => [1, 2, 5][i % 3] * 10 ** Math.floor(i / 3));
const dayLabel = (ts: number) =>
  new Date(ts * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const bars = uPlot.paths.bars!({ size: [0.7, 48], align: 0 });

export function ScansChart(props: { series: { date: string; scans: number }[]; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const total = props.series.reduce((n, d) => n + d.scans, 0);
  const peak = props.series.reduce((p, d) => (d.scans > p.scans ? d : p), { date: '', scans: -1 });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const xs = props.series.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const ys = props.series.map((d) => d.scans);
    const plot = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 260,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          // Half a day either side, so the first and last bars are whole.
          x: { time: true, range: (_u, min, max) => [min - DAY / 2, max + DAY / 2] },
          y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
        },
        axes: [
          { stroke: '#4b5563', incrs: DAY_STEPS, values: (_u, splits) => splits.map(dayLabel) },
          {
            stroke: '#4b5563',
            size: 60,
            incrs: COUNT_STEPS,
            values: (_u, splits) => splits.map((v) => v.toLocaleString()),
          },
        ],
        series: [
          {},
          { label: 'Scans', stroke: '#1d4ed8', width: 0, fill: '#1d4ed8', paths: bars, points: { show: false } },
        ],
      },
      [xs, ys],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(300, el.clientWidth), height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.series]);
  const description =
    `${props.label}: ${total.toLocaleString()} scans in ${props.series.length} days` +
    (peak.scans > 0 ? `, most on ${peak.date} (${peak.scans.toLocaleString()}).` : '.');
  return (
    <figure class="chart-figure">
      <div class="chart" ref={box} role="img" aria-label={description} data-testid="scans-chart" />
      <figcaption class="visually-hidden">{description}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <table>
          <caption>{props.label}</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col" class="num">
                Scans
              </th>
            </tr>
          </thead>
          <tbody>
            {props.series.map((d) => (
              <tr key={d.date}>
                <td>{d.date}</td>
                <td class="num">{d.scans.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
