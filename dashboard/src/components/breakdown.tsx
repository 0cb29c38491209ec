// Scans and distinct visitors per country, device, code...: the table of a breakdown.
import type { ComponentChildren } from 'preact';
import type { Breakdown } from '../types';
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
