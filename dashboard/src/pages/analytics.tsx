// The organization's analytics (or one brand's): totals, scans per day, the last 48 hours hour by
// hour, a world map of scans by country with its table, and the operating system, browser, device
// and landing-page action breakdowns. Every number is the API's answer as it came (GET
// /v1/analytics, one call per dimension), nothing is recomputed here. Range and brand live in the
// address.
import { orgApi, query } from '../api';
import { BreakdownTable, TotalsCards } from '../components/breakdown';
import { HourlyChart, ScansChart } from '../components/chart';
import { ErrorMessage, Loading, Page, SelectField, useLoad } from '../components/ui';
import { useOrgList } from '../components/org-list';
import { useUrlState } from '../components/url-state';
import { WorldMap } from '../components/world-map';
import './analytics.css';
import type { Analytics, Brand, Membership } from '../types';

/** The breakdowns below the map, each with its heading and first column. */
const BREAKDOWNS = [
  { dimension: 'os', title: 'Operating systems', column: 'Operating system', empty: 'No scans in this range.' },
  { dimension: 'browser', title: 'Browsers', column: 'Browser', empty: 'No scans in this range.' },
  { dimension: 'device', title: 'Devices', column: 'Device type', empty: 'No scans in this range.' },
  {
    dimension: 'action',
    title: 'Landing-page actions',
    column: 'Action',
    empty: 'No actions on landing pages in this range (contact cards, link lists, apps and events have them).',
  },
] as const;

const RANGES = [
  { value: '7', label: 'Last 7 days' },
  { value: '30', label: 'Last 30 days' },
  { value: '90', label: 'Last 90 days' },
];

export default function AnalyticsPage(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const [state, set] = useUrlState({ range: '30', brand: '' });
  const { range, brand } = state;
  const scope = { range, brand_ulid: brand || undefined };
  const brands = useOrgList<Brand>(props.org, props.membership, 'brands.view', '/v1/brands');
  const main = useLoad(
    () =>
      api
        .get<{ data: Analytics }>(`/v1/analytics${query({ ...scope, dimension: 'country', hourly: 'true' })}`)
        .then((r) => r.data),
    [props.org, range, brand],
  );
  const more = useLoad(
    () =>
      Promise.all(
        BREAKDOWNS.map((b) =>
          api
            .get<{ data: Analytics }>(`/v1/analytics${query({ ...scope, dimension: b.dimension })}`)
            .then((r) => r.data),
        ),
      ),
    [props.org, range, brand],
  );
  const a = main.data;
  const days = `last ${range} days`;
  return (
    <Page title="Analytics">
      <form class="row" aria-label="Analytics range and scope" onSubmit={(e) => e.preventDefault()}>
        <SelectField label="Range" value={range} onValue={(v) => set({ range: v })} options={RANGES} />
        {!!brands.data?.length && (
          <SelectField
            label="Brand"
            value={brand}
            onValue={(v) => set({ brand: v })}
            options={[
              { value: '', label: 'All brands' },
              ...brands.data.map((b) => ({ value: b.ulid, label: b.name })),
            ]}
          />
        )}
      </form>
      <ErrorMessage error={main.error || more.error || brands.error} />
      {main.loading && !a && <Loading />}
      {a && (
        <div aria-busy={main.loading || more.loading}>
          <TotalsCards totals={a.totals} scansLabel={`scans, ${days}`} />
          <h2>Scans per day</h2>
          <ScansChart series={a.time_series ?? []} label={`Scans per day, ${days}`} />
          <h2>The last 48 hours</h2>
          <HourlyChart series={a.hourly_series ?? []} label="Scans per hour (UTC), last 48 hours" />
          <h2>Scans by country</h2>
          <div class="map-and-table">
            <WorldMap rows={a.dimension_breakdown ?? []} label={`Scans by country, ${days}`} />
            <BreakdownTable
              caption={`Scans by country, ${days}`}
              label="Country"
              rows={a.dimension_breakdown ?? []}
              empty="No scans in this range."
              testId="breakdown-country"
            />
          </div>
          <div class="breakdowns">
            {BREAKDOWNS.map((b, i) => {
              const d = more.data?.[i];
              return (
                <section key={b.dimension} aria-labelledby={`breakdown-${b.dimension}-title`}>
                  <h2 id={`breakdown-${b.dimension}-title`}>{b.title}</h2>
                  {d ? (
                    <BreakdownTable
                      caption={<span class="visually-hidden">{`${b.title}, ${days}`}</span>}
                      label={b.column}
                      rows={d.dimension_breakdown ?? []}
                      empty={b.empty}
                      testId={`breakdown-${b.dimension}`}
                    />
                  ) : (
                    <Loading />
                  )}
                </section>
              );
            })}
          </div>
        </div>
      )}
    </Page>
  );
}
