// The code list: server-side search, filters (status, type, brand, domain), order (newest, oldest,
// name either way) and keyset paging, so it stays fast at 100,000 codes. All of it lives in the
// address: the page's cursors too, so reload, a shared link and back/forward come back to the same
// page. Each row shows the code's QR code as the service renders it; rows can be selected for a
// bulk pause, resume or delete or a print run (a ZIP of their images), and the list as filtered
// and ordered downloads as CSV.
import { useEffect, useMemo, useState } from 'preact/hooks';
import Papa from 'papaparse';
import { orgApi, query } from '../api';
import { CODE_TYPES, destinationSummary } from '../components/destination-forms';
import {
  ConfirmButton,
  ErrorMessage,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextField,
  useLoad,
  EmptyRow,
  HiddenHeader,
  UrlText,
} from '../components/ui';
import { useOrgList } from '../components/org-list';
import { PrintRun } from '../components/print-run';
import { useUrlState } from '../components/url-state';
import { can } from '../session';
import type { Brand, Domain, Membership, Paged, QrCode, QrStyle } from '../types';

/** At most this many rows go into the CSV of the list. */
const CSV_MAX_ROWS = 10_000;

/** The code's QR code, rendered by the service with the code's style. */
function Thumb(props: { org: string; code: QrCode }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    let url: string | null = null;
    let live = true;
    orgApi(props.org)
      .blob(`/v1/qr-codes/${props.code.ulid}/image?format=svg`, 'image/svg+xml')
      .then(
        (b) => {
          url = URL.createObjectURL(b);
          if (live) setSrc(url);
        },
        () => undefined,
      );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [props.org, props.code.ulid, props.code.updated_at]);
  return src ? (
    <img class="thumb" src={src} alt="" width={48} height={48} data-testid="code-thumb" />
  ) : (
    <span class="thumb" />
  );
}

const PAGE_SIZE = 25;

export function destinationUrl(d: QrCode['destination']): string {
  if (typeof d === 'string') return d;
  return d && 'url' in d ? (d.url ?? '') : '';
}

const ORDERS = [
  { value: 'newest', label: 'Newest first', caption: 'newest first' },
  { value: 'oldest', label: 'Oldest first', caption: 'oldest first' },
  { value: 'name', label: 'Name, A to Z', caption: 'by name, A to Z' },
  { value: 'name_desc', label: 'Name, Z to A', caption: 'by name, Z to A' },
];

/** The list's state in the address; `pages` is the cursors of the pages before this one, joined by dots. */
const LIST_STATE = { q: '', status: '', type: '', brand: '', domain: '', order: 'newest', pages: '' };

export default function Codes(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const [state, set] = useUrlState(LIST_STATE);
  const { q: term, status, type, brand, domain, order } = state;
  const cursors = useMemo(() => [undefined, ...(state.pages ? state.pages.split('.') : [])], [state.pages]);
  const cursor = cursors[cursors.length - 1];
  /** A filter or order changed: back to the first page. */
  const filter = (patch: Partial<typeof LIST_STATE>) => set({ ...patch, pages: '' });
  const [search, setSearch] = useState(term);
  // Back, forward and reload bring their own term into the box.
  useEffect(() => setSearch((s) => (s.trim() === term ? s : term)), [term]);
  // Typing settles for a moment before the list is asked again (one history entry for the typing).
  useEffect(() => {
    const t = setTimeout(() => {
      if (search.trim() !== term) set({ q: search.trim(), pages: '' }, { replace: true });
    }, 250);
    return () => clearTimeout(t);
  }, [search]);
  const brands = useOrgList<Brand>(props.org, props.membership, 'brands.view', '/v1/brands');
  const domains = useOrgList<Domain>(props.org, props.membership, 'domains.view', '/v1/domains');
  const styles = useOrgList<QrStyle>(props.org, props.membership, 'styles.manage', '/v1/qr-styles');
  const filters = { search: term, status, type, brand_ulid: brand, domain_ulid: domain, order };
  // The answer carries the term it was asked with, so the caption always describes the rows shown.
  const page = useLoad(
    () =>
      api
        .get<Paged<QrCode>>(`/v1/qr-codes${query({ limit: PAGE_SIZE, ...filters, cursor })}`)
        .then((r) => ({ ...r, term })),
    [props.org, term, status, type, brand, domain, order, cursor],
  );
  const shownTerm = page.data?.term ?? term;
  const codes = page.data?.data ?? [];
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [notice, setNotice] = useState('');
  const [bulkError, setBulkError] = useState<unknown>(null);
  // A selection belongs to the rows shown: another page or filter starts afresh.
  useEffect(() => setSelected(new Set()), [page.data]);
  const chosen = codes.filter((c) => selected.has(c.ulid));
  const mayUpdate = can(props.membership, 'codes.update');
  const mayDelete = can(props.membership, 'codes.delete');

  /** One call per selected code, one after the other; stops at the first refusal. */
  async function bulk(verb: string, each: (c: QrCode) => Promise<unknown>) {
    setNotice('');
    setBulkError(null);
    let done = 0;
    try {
      for (const c of chosen) {
        await each(c);
        done++;
      }
      setNotice(`${done} ${done === 1 ? 'code' : 'codes'} ${verb}.`);
    } catch (err) {
      setBulkError(err);
      if (done) setNotice(`${done} ${done === 1 ? 'code' : 'codes'} ${verb} before the error.`);
    }
    page.reload();
  }

  async function csv() {
    const rows: QrCode[] = [];
    let after: string | undefined;
    do {
      const r = await api.get<Paged<QrCode>>(`/v1/qr-codes${query({ limit: 1000, ...filters, cursor: after })}`);
      rows.push(...r.data);
      after = r.meta.next_cursor ?? undefined;
    } while (after && rows.length < CSV_MAX_ROWS);
    const text = Papa.unparse(
      rows.slice(0, CSV_MAX_ROWS).map((c) => ({
        name: c.name ?? '',
        slug: c.slug.split('/')[1],
        type: c.type,
        status: c.status,
        public_url: c.public_url,
        destination: destinationSummary(c),
        domain: c.domain?.host ?? '',
        brand: c.brand?.name ?? '',
        style: c.style?.name ?? '',
        redirects: c.redirects_count ?? '',
        created_at: c.created_at ?? '',
      })),
      // A cell a spreadsheet would read as a formula is quoted as text.
      { escapeFormulae: true },
    );
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'codes.csv';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
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
          onValue={(v) => filter({ status: v })}
          options={[
            { value: '', label: 'Any' },
            { value: 'active', label: 'Active' },
            { value: 'paused', label: 'Paused' },
            { value: 'archived', label: 'Archived' },
          ]}
        />
        <SelectField
          label="Type"
          value={type}
          onValue={(v) => filter({ type: v })}
          options={[
            { value: '', label: 'Any' },
            ...Object.entries(CODE_TYPES).map(([value, t]) => ({ value, label: t.label })),
          ]}
        />
        {!!brands.data?.length && (
          <SelectField
            label="Brand"
            value={brand}
            onValue={(v) => filter({ brand: v })}
            options={[{ value: '', label: 'Any' }, ...brands.data.map((b) => ({ value: b.ulid, label: b.name }))]}
          />
        )}
        {(domains.data?.length ?? 0) > 1 && (
          <SelectField
            label="Domain"
            value={domain}
            onValue={(v) => filter({ domain: v })}
            options={[{ value: '', label: 'Any' }, ...domains.data!.map((d) => ({ value: d.ulid, label: d.host }))]}
          />
        )}
        <SelectField label="Order" value={order} onValue={(v) => filter({ order: v })} options={ORDERS} />
      </form>
      <div class="row bulk" role="group" aria-label="Selected codes">
        <span>{chosen.length} selected</span>
        {mayUpdate && (
          <>
            <button
              type="button"
              class="btn small"
              disabled={!chosen.length}
              onClick={() => bulk('paused', (c) => api.patch(`/v1/qr-codes/${c.ulid}`, { status: 'paused' }))}
            >
              Pause
            </button>
            <button
              type="button"
              class="btn small"
              disabled={!chosen.length}
              onClick={() => bulk('resumed', (c) => api.patch(`/v1/qr-codes/${c.ulid}`, { status: 'active' }))}
            >
              Resume
            </button>
          </>
        )}
        {mayDelete && (
          <ConfirmButton
            label="Delete selected"
            danger
            disabled={!chosen.length}
            question={`Delete ${chosen.length} ${chosen.length === 1 ? 'code' : 'codes'}? Scanning them shows a not-found page. This cannot be undone.`}
            confirmLabel="Delete"
            onConfirm={() => bulk('deleted', (c) => api.del(`/v1/qr-codes/${c.ulid}`))}
          />
        )}
        <button type="button" class="btn small" onClick={() => csv().catch(setBulkError)}>
          Download CSV
        </button>
      </div>
      <PrintRun org={props.org} codeUlids={chosen.map((c) => c.ulid)} styles={styles.data ?? []} />
      {notice && <StatusMessage>{notice}</StatusMessage>}
      <ErrorMessage error={page.error || bulkError} />
      {page.loading && !page.data ? (
        <Loading />
      ) : (
        <table aria-busy={page.loading}>
          <caption>
            {shownTerm ? `Codes matching “${shownTerm}”` : 'Codes'},{' '}
            {ORDERS.find((o) => o.value === order)?.caption ?? order}, page {cursors.length}
          </caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every code on this page"
                  checked={codes.length > 0 && chosen.length === codes.length}
                  onChange={(e) =>
                    setSelected(new Set((e.target as HTMLInputElement).checked ? codes.map((c) => c.ulid) : []))
                  }
                />
              </th>
              <HiddenHeader>QR code</HiddenHeader>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
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
                  <input
                    type="checkbox"
                    aria-label={`Select ${c.name || c.slug}`}
                    checked={selected.has(c.ulid)}
                    onChange={(e) => {
                      const next = new Set(selected);
                      if ((e.target as HTMLInputElement).checked) next.add(c.ulid);
                      else next.delete(c.ulid);
                      setSelected(next);
                    }}
                  />
                </td>
                <td>
                  <Thumb org={props.org} code={c} />
                </td>
                <td>
                  <a href={`/app/o/${props.org}/codes/${c.ulid}`}>{c.name || c.slug.split('/')[1]}</a>
                </td>
                <td>{CODE_TYPES[c.type]?.label ?? c.type}</td>
                <td>
                  <UrlText url={c.public_url} />
                </td>
                <td class="mono">{destinationSummary(c)}</td>
                <td>
                  <span class={`badge ${c.status}`}>{c.status}</span>
                </td>
                <td class="num">{c.trackable === false ? '—' : (c.redirects_count ?? 0).toLocaleString()}</td>
                <td>
                  {can(props.membership, 'analytics.view') && c.trackable !== false && (
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
            {!codes.length && (
              <EmptyRow cols={9}>
                {term || status || type || brand || domain ? 'No code matches.' : 'No codes yet.'}
              </EmptyRow>
            )}
          </tbody>
        </table>
      )}
      <nav class="row" aria-label="Pages">
        <button
          type="button"
          class="btn"
          disabled={cursors.length < 2}
          onClick={() => set({ pages: cursors.slice(1, -1).join('.') })}
        >
          Previous page
        </button>
        <button
          type="button"
          class="btn"
          disabled={!page.data?.meta.next_cursor}
          onClick={() => set({ pages: [...cursors.slice(1), page.data!.meta.next_cursor!].join('.') })}
        >
          Next page
        </button>
      </nav>
    </Page>
  );
}
