// One code's analytics: the daily series and a breakdown by country, device, language, referrer
// or provider over 7, 30 or 90 days, and the CSV export of the same rows.
import { useState } from 'preact/hooks';
import { orgApi, query } from '../api';
import { BreakdownTable } from '../components/breakdown';
import { ScansChart } from '../components/chart';
import { ConversionTotals } from '../components/conversions';
import { ErrorMessage, Loading, Page, SelectField, useLoad } from '../components/ui';
import { can } from '../session';
import type { Analytics, Membership, QrCode } from '../types';

const DIMENSIONS = [
  { value: 'country', label: 'Country' },
  { value: 'device', label: 'Device' },
  { value: 'language', label: 'Language' },
  { value: 'referrer', label: 'Referrer' },
  { value: 'provider', label: 'Provider' },
  { value: 'consent', label: 'Pixel consent' },
];

export default function CodeAnalytics(props: { org: string; code: string; membership: Membership }) {
  const api = orgApi(props.org);
  const [range, setRange] = useState('30');
  const [dimension, setDimension] = useState('country');
  const [csvError, setCsvError] = useState<unknown>(null);
  const code = useLoad(
    () => api.get<{ data: QrCode }>(`/v1/qr-codes/${props.code}`).then((r) => r.data),
    [props.org, props.code],
  );
  const data = useLoad(
    () =>
      api
        .get<{ data: Analytics }>(`/v1/analytics/qr-codes/${props.code}${query({ range, dimension })}`)
        .then((r) => r.data),
    [props.org, props.code, range, dimension],
  );
  const name = code.data ? code.data.name || code.data.slug : 'Code';
  const a = data.data;
  // The export endpoint offers the organization's dimensions; provider is read on the page only.
  const exportable = dimension !== 'provider' && can(props.membership, 'analytics.export');
  async function csv() {
    setCsvError(null);
    try {
      await api.download(
        `/v1/analytics/export${query({ code_ulid: props.code, range, dimension })}`,
        `code-${props.code}-${range}d-${dimension}.csv`,
        'text/csv',
      );
    } catch (err) {
      setCsvError(err);
    }
  }
  return (
    <Page
      title={`Analytics: ${name}`}
      actions={
        <a class="btn" href={`/app/o/${props.org}/codes/${props.code}`}>
          Edit the code
        </a>
      }
    >
      <ErrorMessage error={code.error} />
      <div class="row">
        <SelectField
          label="Range"
          value={range}
          onValue={setRange}
          options={[
            { value: '7', label: 'Last 7 days' },
            { value: '30', label: 'Last 30 days' },
            { value: '90', label: 'Last 90 days' },
          ]}
        />
        <SelectField label="Breakdown by" value={dimension} onValue={setDimension} options={DIMENSIONS} />
        {exportable && (
          <button type="button" class="btn" onClick={csv}>
            Download CSV
          </button>
        )}
      </div>
      <ErrorMessage error={data.error || csvError} />
      {data.loading && !a && <Loading />}
      {a && (
        <>
          <div class="cards">
            <div class="card">
              <div class="value">{a.totals.scans.toLocaleString()}</div>
              <div class="label">scans</div>
            </div>
            <div class="card">
              <div class="value">{a.totals.uniques.toLocaleString()}</div>
              <div class="label">unique visitors</div>
            </div>
            <div class="card">
              <div class="value">{Math.round(a.totals.unique_rate * 100)}%</div>
              <div class="label">unique rate</div>
            </div>
          </div>
          <ScansChart series={a.time_series ?? []} label={`Scans per day, last ${range} days`} />
          <BreakdownTable
            caption={`Scans by ${(a.dimension_label ?? dimension).toLowerCase()}`}
            label={a.dimension_label ?? dimension}
            rows={a.dimension_breakdown ?? []}
            empty="No scans in this range."
          />
          {a.conversions && (
            <ConversionTotals conversions={a.conversions} caption={`Conversions, last ${range} days`} />
          )}
        </>
      )}
    </Page>
  );
}
