import { orgApi } from '../api';
import { BreakdownTable } from '../components/breakdown';
import { ScansChart } from '../components/chart';
import { ConversionsTable, ConversionTotals } from '../components/conversions';
import { Onboarding } from '../components/onboarding';
import { ErrorMessage, Loading, Page, useLoad } from '../components/ui';
import { can } from '../session';
import type { Analytics, Membership, Status, WalletInfo } from '../types';

export default function Overview(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const m = props.membership;
  const status = useLoad(() => api.get<Status>('/v1/status'), [props.org]);
  const analytics = useLoad(
    () =>
      can(m, 'analytics.view')
        ? api.get<{ data: Analytics }>('/v1/analytics?range=30').then((r) => r.data)
        : Promise.resolve(null),
    [props.org],
  );
  const wallet = useLoad(
    () =>
      can(m, 'wallet.view')
        ? api.get<{ data: WalletInfo }>('/v1/wallet?per_page=1').then((r) => r.data)
        : Promise.resolve(null),
    [props.org],
  );
  const w = wallet.data;
  const low = w && w.low_balance_threshold !== null && Number(w.balance) < Number(w.low_balance_threshold);
  const a = analytics.data;
  const s = status.data;
  return (
    <Page title={`${m.name}: overview`}>
      {low && (
        <div class="banner" role="alert">
          The wallet balance ({w.balance} {w.currency}) is below its low-balance threshold ({w.low_balance_threshold}{' '}
          {w.currency}). Calls beyond the plan’s included calls are refused when it runs out.
        </div>
      )}
      <Onboarding org={props.org} membership={m} />
      <div class="cards">
        {a && (
          <div class="card">
            <div class="value">{a.totals.scans.toLocaleString()}</div>
            <div class="label">scans, last 30 days</div>
          </div>
        )}
        {a && (
          <div class="card">
            <div class="value">{a.totals.uniques.toLocaleString()}</div>
            <div class="label">unique visitors</div>
          </div>
        )}
        {s && (
          <div class="card">
            <div class="value">
              {s.api.calls_used_month.toLocaleString()}
              <span class="muted">
                {' / '}
                {s.api.calls_included_month < 0 ? 'unlimited' : s.api.calls_included_month.toLocaleString()}
              </span>
            </div>
            <div class="label">API calls this month, used / included ({s.plan?.name ?? 'no plan'})</div>
          </div>
        )}
        {w && (
          <div class="card">
            <div class="value">
              {w.balance} {w.currency}
            </div>
            <div class="label">wallet balance</div>
          </div>
        )}
      </div>
      <ErrorMessage error={status.error || analytics.error || wallet.error} />
      {analytics.loading && <Loading />}
      {a && (
        <>
          <h2>Scans over the last 30 days</h2>
          <ScansChart series={a.time_series ?? []} label="Scans per day, last 30 days" />
          <h2>Top codes</h2>
          <BreakdownTable
            caption={<span class="visually-hidden">Codes with the most scans in the last 30 days</span>}
            label="Code"
            rows={a.top_codes ?? []}
            href={(c) => (c.key ? `/app/o/${props.org}/codes/${c.key}/analytics` : null)}
            empty="No scans yet."
          />
          {a.conversions && (
            <>
              <h2>Conversions</h2>
              <ConversionTotals conversions={a.conversions} caption="Conversions in the last 30 days, by currency" />
              <ConversionsTable
                caption="Conversions by brand, last 30 days"
                label="Brand"
                rows={a.conversions.by_brand ?? []}
                empty="No conversions yet."
              />
              <ConversionsTable
                caption="Conversions by code, last 30 days"
                label="Code"
                rows={a.conversions.by_code ?? []}
                href={(c) => (c.key ? `/app/o/${props.org}/codes/${c.key}/analytics` : null)}
                empty="No conversions yet."
              />
            </>
          )}
        </>
      )}
    </Page>
  );
}
