// Domains: the shared fallback hosts and the organization's custom domains, with the DNS records
// to publish (copy buttons), verification on demand, certificate state, primary and deletion.
import { useState } from 'preact/hooks';
import { orgApi } from '../api';
import {
  ConfirmButton,
  CopyButton,
  ErrorMessage,
  Form,
  Loading,
  Page,
  StatusMessage,
  TextField,
  formatDate,
  useLoad,
} from '../components/ui';
import { can } from '../session';
import type { Domain, Membership, Paged } from '../types';

function DnsRecords(props: { d: Domain }) {
  const v = props.d.verification;
  if (!v?.txt_record_name) return null;
  const rows = [
    { type: 'TXT', name: v.txt_record_name, value: v.txt_record_value ?? '' },
    ...(v.cname_target ? [{ type: 'CNAME', name: props.d.host, value: v.cname_target }] : []),
  ];
  return (
    <table>
      <caption>DNS records to publish for {props.d.host}</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col">Name</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.type}>
            <td>{r.type}</td>
            <td>
              <span class="mono">{r.name}</span> <CopyButton text={r.name} label={`Copy the ${r.type} record name`} />
            </td>
            <td>
              <span class="mono">{r.value}</span>{' '}
              <CopyButton text={r.value} label={`Copy the ${r.type} record value`} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function Domains(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const manage = can(props.membership, 'domains.manage');
  const list = useLoad(() => api.get<Paged<Domain>>('/v1/domains').then((r) => r.data), [props.org]);
  const [host, setHost] = useState('');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<unknown>(null);
  async function act(d: Domain, body: Record<string, boolean>, done: (d: Domain) => string) {
    setError(null);
    setNotice('');
    try {
      const r = await api.patch<{ data: Domain }>(`/v1/domains/${d.ulid}`, body);
      setNotice(done(r.data));
      list.reload();
    } catch (err) {
      setError(err);
    }
  }
  const custom = (list.data ?? []).filter((d) => d.type === 'custom');
  const shared = (list.data ?? []).filter((d) => d.type !== 'custom');
  return (
    <Page title="Domains">
      <ErrorMessage error={list.error || error} />
      {notice && <StatusMessage>{notice}</StatusMessage>}
      {!list.data && <Loading />}
      {list.data && (
        <>
          <h2>Custom domains</h2>
          {!custom.length && <p class="muted">No custom domains yet.</p>}
          {custom.map((d) => (
            <section key={d.ulid} class="card" aria-labelledby={`domain-${d.ulid}`}>
              <h3 id={`domain-${d.ulid}`} class="mono">
                {d.host} {d.is_primary && <span class="badge">primary</span>}
              </h3>
              <dl class="facts">
                <dt>Status</dt>
                <dd>
                  <span class={`badge ${d.status}`}>{d.status}</span>
                  {d.verified_at && <> since {formatDate(d.verified_at)}</>}
                </dd>
                {d.verification?.last_error && (
                  <>
                    <dt>Last check</dt>
                    <dd>
                      {formatDate(d.verification.last_checked_at)}: {d.verification.last_error}
                    </dd>
                  </>
                )}
                {d.status === 'pending' && d.verification?.claim_expires_at && (
                  <>
                    <dt>Verify before</dt>
                    <dd>{formatDate(d.verification.claim_expires_at)}</dd>
                  </>
                )}
                <dt>Certificate</dt>
                <dd>
                  <span class={`badge ${d.ssl_status ?? ''}`}>{d.ssl_status ?? '—'}</span>
                  {d.ssl_expires_at && <> valid until {formatDate(d.ssl_expires_at)}</>}
                  {d.ssl_error && <> ({d.ssl_error})</>}
                </dd>
              </dl>
              {d.status !== 'active' && <DnsRecords d={d} />}
              {manage && (
                <div class="row">
                  {d.status !== 'active' && (
                    <button
                      type="button"
                      class="btn primary"
                      onClick={() =>
                        act(d, { verify: true }, (r) =>
                          r.status === 'active'
                            ? `${r.host} is verified.`
                            : `${r.host} is not verified yet: ${r.verification?.last_error ?? 'the TXT record was not found.'}`,
                        )
                      }
                    >
                      Verify {d.host} now
                    </button>
                  )}
                  {d.status === 'active' && !d.is_primary && (
                    <button
                      type="button"
                      class="btn"
                      onClick={() => act(d, { is_primary: true }, (r) => `${r.host} is the primary domain.`)}
                    >
                      Make {d.host} primary
                    </button>
                  )}
                  {d.status === 'active' && (
                    <button
                      type="button"
                      class="btn"
                      onClick={() =>
                        act(d, { refresh_ssl: true }, (r) => `A new certificate for ${r.host} is on its way.`)
                      }
                    >
                      Renew the certificate of {d.host}
                    </button>
                  )}
                  <ConfirmButton
                    label={`Delete ${d.host}`}
                    danger
                    question={`Delete ${d.host}? Codes must be moved to another domain first.`}
                    onConfirm={async () => {
                      await api.del(`/v1/domains/${d.ulid}`);
                      setNotice(`Deleted ${d.host}.`);
                      list.reload();
                    }}
                  />
                </div>
              )}
            </section>
          ))}
          {manage && (
            <>
              <h2>Add a custom domain</h2>
              <Form
                label="Add a custom domain"
                submitLabel="Add domain"
                onSubmit={async () => {
                  const r = await api.post<{ data: Domain }>('/v1/domains', { host: host.trim() });
                  setHost('');
                  setNotice(`Added ${r.data.host}: publish its DNS records, then verify.`);
                  list.reload();
                }}
              >
                <TextField label="Host name" value={host} onValue={setHost} placeholder="qr.example.com" required />
              </Form>
            </>
          )}
          <h2>Shared domains</h2>
          <table>
            <caption class="visually-hidden">Shared domains every organization may use</caption>
            <thead>
              <tr>
                <th scope="col">Host</th>
                <th scope="col">Status</th>
                <th scope="col">Primary</th>
              </tr>
            </thead>
            <tbody>
              {shared.map((d) => (
                <tr key={d.ulid}>
                  <td class="mono">{d.host}</td>
                  <td>
                    <span class={`badge ${d.status}`}>{d.status}</span>
                  </td>
                  <td>{d.is_primary ? 'yes' : 'no'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}
