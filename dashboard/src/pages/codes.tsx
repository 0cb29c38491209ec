// The code list: server-side search, status filter and keyset paging (newest first), so it stays
// fast at 100,000 codes. Earlier pages are remembered by their cursors.
import { useEffect, useState } from 'preact/hooks';
import { orgApi, query } from '../api';
import { ErrorMessage, Loading, Page, SelectField, TextField, useLoad, EmptyRow, HiddenHeader } from '../components/ui';
import { can } from '../session';
import type { Membership, Paged, QrCode } from '../types';

const PAGE_SIZE = 25;

export function destinationUrl(d: QrCode['destination']): string {
  if (typeof d === 'string') return d;
  return d && 'url' in d ? (d.url ?? '') : '';
}

export default function Codes(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const [search, setSearch] = useState('');
  const [term, setTerm] = useState('');
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  // Typing settles for a moment before the list is asked again.
  useEffect(() => {
    const t = setTimeout(() => {
      setTerm(search.trim());
      setCursors([undefined]);
    }, 250);
    return () => clearTimeout(t);
  }, [search]);
  // The answer carries the term it was asked with, so the caption always describes the rows shown.
  const page = useLoad(
    () =>
      api
        .get<Paged<QrCode>>(`/v1/qr-codes${query({ limit: PAGE_SIZE, order: 'newest', search: term, status, cursor })}`)
        .then((r) => ({ ...r, term })),
    [props.org, term, status, cursor],
  );
  const shownTerm = page.data?.term ?? term;
  const codes = page.data?.data ?? [];
  return (
    <Page
      title="Codes"
      actions={
        can(props.membership, 'codes.create') && (
          <a class="btn primary" href={`/app/o/${props.org}/codes/new`}>
            New code
          </a>
        )
      }
    >
      <form class="row" role="search" aria-label="Find codes" onSubmit={(e) => e.preventDefault()}>
        <TextField
          label="Search"
          type="search"
          value={search}
          onValue={setSearch}
          placeholder="Name, slug or destination"
        />
        <SelectField
          label="Status"
          value={status}
          onValue={(v) => {
            setStatus(v);
            setCursors([undefined]);
          }}
          options={[
            { value: '', label: 'Any' },
            { value: 'active', label: 'Active' },
            { value: 'paused', label: 'Paused' },
            { value: 'archived', label: 'Archived' },
          ]}
        />
      </form>
      <ErrorMessage error={page.error} />
      {page.loading && !page.data ? (
        <Loading />
      ) : (
        <table aria-busy={page.loading}>
          <caption>
            {shownTerm ? `Codes matching “${shownTerm}”` : 'Codes'}, newest first, page {cursors.length}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Public URL</th>
              <th scope="col">Destination</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">
                Redirects
              </th>
              <HiddenHeader>Links</HiddenHeader>
            </tr>
          </thead>
          <tbody>
            {codes.map((c) => (
              <tr key={c.ulid}>
                <td>
                  <a href={`/app/o/${props.org}/codes/${c.ulid}`}>{c.name || c.slug.split('/')[1]}</a>
                </td>
                <td class="mono">{c.public_url}</td>
                <td class="mono">{destinationUrl(c.destination)}</td>
                <td>
                  <span class={`badge ${c.status}`}>{c.status}</span>
                </td>
                <td class="num">{(c.redirects_count ?? 0).toLocaleString()}</td>
                <td>
                  {can(props.membership, 'analytics.view') && (
                    <a
                      href={`/app/o/${props.org}/codes/${c.ulid}/analytics`}
                      aria-label={`Analytics of ${c.name || c.slug}`}
                    >
                      Analytics
                    </a>
                  )}
                </td>
              </tr>
            ))}
            {!codes.length && <EmptyRow cols={6}>{term || status ? 'No code matches.' : 'No codes yet.'}</EmptyRow>}
          </tbody>
        </table>
      )}
      <nav class="row" aria-label="Pages">
        <button
          type="button"
          class="btn"
          disabled={cursors.length < 2}
          onClick={() => setCursors((cs) => cs.slice(0, -1))}
        >
          Previous page
        </button>
        <button
          type="button"
          class="btn"
          disabled={!page.data?.meta.next_cursor}
          onClick={() => setCursors((cs) => [...cs, page.data!.meta.next_cursor!])}
        >
          Next page
        </button>
      </nav>
    </Page>
  );
}
