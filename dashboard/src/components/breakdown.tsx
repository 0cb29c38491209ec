// Scans and distinct visitors per country, device, code...: the table of a breakdown, and the
// totals of a range as cards.
import type { ComponentChildren } from 'preact';
import type { Analytics, Breakdown } from '../types';
import { EmptyRow } from './ui';

export function BreakdownTable(props: {
  caption: ComponentChildren;
  /** The first column's header: Country, Code, ... */
  label: string;
  rows: Breakdown[];
  /** A link for an entry, if it has a page. */
  href?: (b: Breakdown) => string | null;
  empty: string;
  /** data-testid of the table, for the browser tests. */
  testId?: string;
}) {
  return (
    <table data-testid={props.testId}>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{props.label}</th>
          <th scope="col" class="num">
            Scans
          </th>
          <th scope="col" class="num">
            Unique visitors
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((b) => {
          const href = props.href?.(b);
          return (
            <tr key={b.key || b.label}>
              <td>{href ? <a href={href}>{b.label}</a> : b.label}</td>
              <td class="num">{b.scans.toLocaleString()}</td>
              <td class="num">{b.uniques.toLocaleString()}</td>
            </tr>
          );
        })}
        {!props.rows.length && <EmptyRow cols={3}>{props.empty}</EmptyRow>}
      </tbody>
    </table>
  );
}

/** Scans, distinct visitors and their rate over a range, as the API gives them. */
export function TotalsCards(props: { totals: Analytics['totals']; scansLabel: string }) {
  const t = props.totals;
  return (
    <div class="cards">
      <div class="card">
        <div class="value" data-testid="total-scans">
          {t.scans.toLocaleString()}
        </div>
        <div class="label">{props.scansLabel}</div>
      </div>
      <div class="card">
        <div class="value" data-testid="total-uniques">
          {t.uniques.toLocaleString()}
        </div>
        <div class="label">unique visitors</div>
      </div>
      <div class="card">
        <div class="value">{Math.round(t.unique_rate * 100)}%</div>
        <div class="label">unique rate</div>
      </div>
    </div>
  );
}
