import { useState } from 'preact/hooks';
import { orgApi, query } from '../api';
import {
  ErrorMessage,
  Form,
  Loading,
  Page,
  StatusMessage,
  TextField,
  formatDate,
  useLoad,
  EmptyRow,
} from '../components/ui';
import { can } from '../session';
import type { Membership, WalletInfo } from '../types';

const PER_PAGE = 25;

export default function Wallet(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const [page, setPage] = useState(1);
  const wallet = useLoad(
    () => api.get<{ data: WalletInfo }>(`/v1/wallet${query({ page, per_page: PER_PAGE })}`).then((r) => r.data),
    [props.org, page],
  );
  const [threshold, setThreshold] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const w = wallet.data;
  if (!w) return wallet.error ? <ErrorMessage error={wallet.error} /> : <Loading />;
  const low = w.low_balance_threshold !== null && Number(w.balance) < Number(w.low_balance_threshold);
  // The wallet read always carries a page of the ledger.
  const transactions = w.transactions ?? { data: [], meta: { current_page: 1, last_page: 1, per_page: 25, total: 0 } };
  const meta = transactions.meta;
  return (
    <Page title="Wallet">
      {low && (
        <div class="banner" role="alert">
          The balance is below the low-balance threshold of {w.low_balance_threshold} {w.currency}.
        </div>
      )}
      <div class="cards">
        <div class="card">
          <div class="value">
            {w.balance} {w.currency}
          </div>
          <div class="label">balance</div>
        </div>
        <div class="card">
          <div class="value">{w.low_balance_threshold ?? '—'}</div>
          <div class="label">low-balance threshold</div>
        </div>
      </div>
      <p class="muted">
        API calls beyond the plan’s included calls are paid from the wallet. Top-ups are recorded by platform staff.
      </p>
      {notice && <StatusMessage>{notice}</StatusMessage>}
      {can(props.membership, 'wallet.manage') && (
        <Form
          label="Low-balance threshold"
          submitLabel="Save threshold"
          onSubmit={async () => {
            const value = (threshold ?? w.low_balance_threshold ?? '').trim();
            await api.patch('/wallet/settings', { low_balance_threshold: value || null });
            setNotice(value ? `Threshold set to ${value} ${w.currency}.` : 'Threshold removed.');
            setThreshold(null);
            wallet.reload();
          }}
        >
          <TextField
            label={`Low-balance threshold (${w.currency})`}
            inputMode="decimal"
            value={threshold ?? w.low_balance_threshold ?? ''}
            onValue={setThreshold}
            hint="A banner warns when the balance is below it. Empty: no warning."
          />
        </Form>
      )}
      <table>
        <caption>
          Ledger, newest first (page {meta.current_page} of {meta.last_page}, {meta.total} entries)
        </caption>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Type</th>
            <th scope="col">Reference</th>
            <th scope="col" class="num">
              Amount
            </th>
            <th scope="col" class="num">
              Balance after
            </th>
          </tr>
        </thead>
        <tbody>
          {transactions.data.map((t) => (
            <tr key={t.ulid}>
              <td>{formatDate(t.created_at)}</td>
              <td>{t.type}</td>
              <td>
                {t.reference_type === 'top_up'
                  ? 'top-up'
                  : t.reference_type === 'api_usage'
                    ? 'API usage'
                    : (t.reference_type ?? '—')}
              </td>
              <td class="num">{t.amount}</td>
              <td class="num">{t.balance_after}</td>
            </tr>
          ))}
          {!transactions.data.length && <EmptyRow cols={5}>No transactions yet.</EmptyRow>}
        </tbody>
      </table>
      <nav class="row" aria-label="Ledger pages">
        <button type="button" class="btn" disabled={page <= 1} onClick={() => setPage(page - 1)}>
          Previous page
        </button>
        <button type="button" class="btn" disabled={page >= meta.last_page} onClick={() => setPage(page + 1)}>
          Next page
        </button>
      </nav>
    </Page>
  );
}
