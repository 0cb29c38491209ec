// Scans over time drawn with uPlot (MIT; about 20 KB gzipped, canvas) as one bar per UTC day or
// per UTC hour: the axis ticks fall on whole days (or whole hours) and whole counts only, as the
// data does. The canvas is described for screen readers, and the same numbers are available as a
// table.
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const HOUR = 3_600;
const DAY = 24 * HOUR;

/** How one kind of bar is placed, ticked and named. */
interface Unit {
  /** The bar's width in seconds. */
  size: number;
  /** Tick steps of the time axis: whole units only. */
  steps: number[];
  tick: (ts: number) => string;
  /** The table's first column and the description's words. */
  column: string;
  row: (ts: number) => string;
  noun: [string, string];
}

const utc = (ts: number) => new Date(ts * 1000);
const dayLabel = (ts: number) =>
  utc(ts).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const hourLabel = (ts: number) => `${String(utc(ts).getUTCHours()).padStart(2, '0')}:00`;

const UNITS: Record<'day' | 'hour', Unit> = {
  // Days and weeks, never hours.
  day: {
    size: DAY,
    steps: [1, 2, 7, 14, 28].map((d) => d * DAY),
    tick: dayLabel,
    column: 'Day (UTC)',
    row: (ts) => utc(ts).toISOString().slice(0, 10),
    noun: ['day', 'days'],
  },
  // Whole hours; a tick at midnight names the day.
  hour: {
    size: HOUR,
    steps: [1, 2, 3, 6, 12, 24].map((h) => h * HOUR),
    tick: (ts) => (utc(ts).getUTCHours() === 0 ? dayLabel(ts) : hourLabel(ts)),
    column: 'Hour (UTC)',
    row: (ts) => `${utc(ts).toISOString().slice(0, 10)} ${hourLabel(ts)}`,
    noun: ['hour', 'hours'],
  },
};

/** Tick steps of the count axis: 1, 2, 5, 10, 20, 50, ... (never a fraction of a scan). */
const COUNT_STEPS = Array.from({ length: 30 }, (_, i) => [1, 2, 5][i % 3] * 10 ** Math.floor(i / 3));
const bars = uPlot.paths.bars!({ size: [0.7, 48], align: 0 });

/** Scans per bar: `at` is the start of the bar's day or hour in epoch seconds. */
function BarChart(props: { bars: { at: number; scans: number }[]; unit: Unit; label: string; testId: string }) {
  const box = useRef<HTMLDivElement>(null);
  const { unit } = props;
  const total = props.bars.reduce((n, d) => n + d.scans, 0);
  const peak = props.bars.reduce((p, d) => (d.scans > p.scans ? d : p), { at: 0, scans: -1 });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const plot = new uPlot(
      {
        width: Math.max(300, el.clientWidth),
        height: 260,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: false },
        cursor: { drag: { x: false, y: false } },
        scales: {
          // Half a bar either side, so the first and last bars are whole.
          x: { time: true, range: (_u, min, max) => [min - unit.size / 2, max + unit.size / 2] },
          y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
        },
        axes: [
          { stroke: '#4b5563', incrs: unit.steps, values: (_u, splits) => splits.map(unit.tick) },
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
      [props.bars.map((d) => d.at), props.bars.map((d) => d.scans)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(300, el.clientWidth), height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.bars]);
  const [one, many] = unit.noun;
  const description =
    `${props.label}: ${total.toLocaleString()} scans in ${props.bars.length} ${props.bars.length === 1 ? one : many}` +
    (peak.scans > 0 ? `, most on ${unit.row(peak.at)} (${peak.scans.toLocaleString()}).` : '.');
  return (
    <figure class="chart-figure">
      <div class="chart" ref={box} role="img" aria-label={description} data-testid={props.testId} />
      <figcaption class="visually-hidden">{description}</figcaption>
      <details>
        <summary>Show the numbers</summary>
        <table data-testid={`${props.testId}-table`}>
          <caption>{props.label}</caption>
          <thead>
            <tr>
              <th scope="col">{unit.column}</th>
              <th scope="col" class="num">
                Scans
              </th>
            </tr>
          </thead>
          <tbody>
            {props.bars.map((d) => (
              <tr key={d.at}>
                <td>{unit.row(d.at)}</td>
                <td class="num">{d.scans.toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

/** One bar per UTC day of a time_series. */
export function ScansChart(props: { series: { date: string; scans: number }[]; label: string }) {
  return (
    <BarChart
      bars={props.series.map((d) => ({ at: Date.parse(`${d.date}T00:00:00Z`) / 1000, scans: d.scans }))}
      unit={UNITS.day}
      label={props.label}
      testId="scans-chart"
    />
  );
}

/** One bar per UTC hour of an hourly_series. */
export function HourlyChart(props: { series: { hour: string; scans: number }[]; label: string }) {
  return (
    <BarChart
      bars={props.series.map((d) => ({ at: Date.parse(d.hour) / 1000, scans: d.scans }))}
      unit={UNITS.hour}
      label={props.label}
      testId="hourly-chart"
    />
  );
}
