// The staff area: find an organization and record a wallet top-up (amount and reference). It is
// written to the organization's ledger and to the audit log; no payment provider is involved.
import { useEffect, useState } from 'preact/hooks';
import { call, query } from '../api';
import { ConfirmButton, ErrorMessage, Loading, Page, StatusMessage, TextField, useLoad } from '../components/ui';
import { useSession } from '../session';
import { NotFound } from './not-found';

interface OrgRow {
  ulid: string;
  name: string;
  slug: string;
  plan: string | null;
  currency: string;
  balance: string;
}

function TopUp(props: { org: OrgRow; onDone(message: string): void }) {
  const [amount, setAmount] = useState('');
  const [reference, setReference] = useState('');
  const o = props.org;
  return (
    <fieldset>
      <legend>
        Top up {o.name} ({o.currency})
      </legend>
      <div class="grid">
        <TextField
          label={`Amount for ${o.name} (${o.currency})`}
          inputMode="decimal"
          value={amount}
          onValue={setAmount}
        />
        <TextField
          label={`Reference for ${o.name}`}
          value={reference}
          onValue={setReference}
          hint="e.g. the invoice or bank transfer"
        />
      </div>
      <ConfirmButton
        label={`Record top-up for ${o.name}`}
        disabled={!amount.trim() || !reference.trim()}
        question={`Credit ${amount} ${o.currency} to ${o.name} with reference “${reference}”? It is written to the ledger and the audit log.`}
        confirmLabel="Record top-up"
        onConfirm={async () => {
          const r = await call<{ data: { credited: string; balance: string; currency: string } }>(
            'POST',
            `/staff/organizations/${o.ulid}/top-ups`,
            { body: { amount: amount.trim(), reference: reference.trim() } },
          );
          setAmount('');
          setReference('');
          props.onDone(
            `Credited ${r.data.credited} ${r.data.currency} to ${o.name}; the balance is ${r.data.balance}.`,
          );
        }}
      />
    </fieldset>
  );
}

export default function Staff() {
  const { info } = useSession();
  const [search, setSearch] = useState('');
  const [term, setTerm] = useState('');
  const [notice, setNotice] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setTerm(search.trim()), 250);
    return () => clearTimeout(t);
  }, [search]);
  const orgs = useLoad(
    () =>
      info?.user?.is_staff
        ? call<{ data: OrgRow[] }>('GET', `/staff/organizations${query({ search: term })}`)
        : Promise.resolve({ data: [] }),
    [term, info?.user?.is_staff],
  );
  if (!info?.user?.is_staff) return <NotFound />;
  return (
    <Page title="Staff: wallet top-ups">
      <p>Record money received for an organization. No payment is taken here.</p>
      {notice && <StatusMessage>{notice}</StatusMessage>}
      <form role="search" aria-label="Find organizations" onSubmit={(e) => e.preventDefault()}>
        <TextField
          label="Find an organization"
          type="search"
          value={search}
          onValue={setSearch}
          placeholder="Name or slug"
        />
      </form>
      <ErrorMessage error={orgs.error} />
      {!orgs.data ? (
        <Loading />
      ) : (
        <>
          <table>
            <caption>Organizations{term ? ` matching “${term}”` : ''}</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col">Plan</th>
                <th scope="col" class="num">
                  Balance
                </th>
              </tr>
            </thead>
            <tbody>
              {orgs.data.data.map((o) => (
                <tr key={o.ulid}>
                  <td>{o.name}</td>
                  <td class="mono">{o.slug}</td>
                  <td>{o.plan ?? 'none'}</td>
                  <td class="num">
                    {o.balance} {o.currency}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {orgs.data.data.slice(0, 5).map((o) => (
            <TopUp
              key={o.ulid}
              org={o}
              onDone={(m) => {
                setNotice(m);
                orgs.reload();
              }}
            />
          ))}
          {orgs.data.data.length > 5 && <p class="muted">Narrow the search to top up another organization.</p>}
        </>
      )}
    </Page>
  );
}
