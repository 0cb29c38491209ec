// Conversions (POST /v1/conversions) of an analytics scope: the amounts per currency, and the
// conversions of each brand or code with one amount column per currency.
import type { ConversionEntry, Conversions } from '../types';
import { EmptyRow } from './ui';

/** Every currency of the entries, in code order. */
function currenciesOf(entries: { amounts: { currency: string }[] }[]): string[] {
  return [...new Set(entries.flatMap((e) => e.amounts.map((a) => a.currency)))].sort();
}

/** The scope's conversions: count and converting visitors, then one row per currency. */
export function ConversionTotals(props: { conversions: Conversions; caption: string }) {
  const c = props.conversions;
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Figure</th>
          <th scope="col" class="num">
            Value
          </th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th scope="row">Conversions</th>
          <td class="num">{c.count.toLocaleString()}</td>
        </tr>
        <tr>
          <th scope="row">Converting visitors</th>
          <td class="num">{c.unique_visitors.toLocaleString()}</td>
        </tr>
        {c.amounts.map((a) => (
          <tr key={a.currency}>
            <th scope="row">Amount ({a.currency})</th>
            <td class="num">{a.amount}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Conversions per brand or code, an amount column per currency. */
export function ConversionsTable(props: {
  caption: string;
  label: string;
  rows: ConversionEntry[];
  href?: (e: ConversionEntry) => string | null;
  empty: string;
}) {
  const currencies = currenciesOf(props.rows);
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{props.label}</th>
          <th scope="col" class="num">
            Conversions
          </th>
          <th scope="col" class="num">
            Unique visitors
          </th>
          {currencies.map((cur) => (
            <th scope="col" class="num" key={cur}>
              Amount ({cur})
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((e) => {
          const href = props.href?.(e);
          return (
            <tr key={e.key || e.label}>
              <td>{href ? <a href={href}>{e.label}</a> : e.label}</td>
              <td class="num">{e.count.toLocaleString()}</td>
              <td class="num">{e.unique_visitors.toLocaleString()}</td>
              {currencies.map((cur) => (
                <td class="num" key={cur}>
                  {e.amounts.find((a) => a.currency === cur)?.amount ?? '—'}
                </td>
              ))}
            </tr>
          );
        })}
        {!props.rows.length && <EmptyRow cols={3 + currencies.length}>{props.empty}</EmptyRow>}
      </tbody>
    </table>
  );
}
