// Bulk import: a CSV file becomes rows, the service stages them and reports row errors, the
// member confirms, and a progress bar follows the job until it completes.
import { useEffect, useState } from 'preact/hooks';
import Papa from 'papaparse';
import { orgApi } from '../api';
import { ErrorMessage, Form, Loading, Page, SelectField, StatusMessage } from '../components/ui';
import { useImportDefaults } from '../components/org-list';
import type { BulkImport, Membership } from '../types';

const COLUMNS = ['slug', 'destination', 'name', 'domain_ulid', 'brand_ulid', 'style_ulid', 'status'];
const DONE = ['completed', 'completed_with_errors', 'failed', 'expired'];

interface Parsed {
  rows: Record<string, string>[];
  ignored: string[];
}

function parseCsv(text: string): Parsed {
  const out = Papa.parse<Record<string, string>>(text, {
    header: true,
    skipEmptyLines: 'greedy',
    transformHeader: (h) => h.trim(),
  });
  const headers = out.meta.fields ?? [];
  const rows = out.data.map((r) => {
    const row: Record<string, string> = {};
    for (const c of COLUMNS) if (r[c] !== undefined && r[c].trim() !== '') row[c] = r[c].trim();
    return row;
  });
  return { rows, ignored: headers.filter((h) => !COLUMNS.includes(h)) };
}

export default function Imports(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const refs = useImportDefaults(props.org);
  const [file, setFile] = useState<File | null>(null);
  const [domain, setDomain] = useState('');
  const [brand, setBrand] = useState('');
  const [parsed, setParsed] = useState<Parsed | null>(null);
  const [staged, setStaged] = useState<{ data: BulkImport; token: string } | null>(null);
  const [progress, setProgress] = useState<BulkImport | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    if (!domain && refs.data?.domains.length)
      setDomain((refs.data.domains.find((d) => d.is_primary) ?? refs.data.domains[0]).ulid);
  }, [refs.data]);

  // Follows the confirmed import until it is done.
  useEffect(() => {
    if (!progress || DONE.includes(progress.status)) return;
    const t = setTimeout(async () => {
      try {
        setProgress((await api.get<{ data: BulkImport }>(`/v1/qr-codes/bulk/${progress.ulid}`)).data);
      } catch (err) {
        setError(err);
      }
    }, 700);
    return () => clearTimeout(t);
  }, [progress]);

  async function stage() {
    if (!file) throw new Error('Choose a CSV file first.');
    const p = parseCsv(await file.text());
    if (!p.rows.length) throw new Error('The file has no rows under its header line.');
    setParsed(p);
    setProgress(null);
    const defaults: Record<string, string> = {};
    if (domain) defaults.domain_ulid = domain;
    if (brand) defaults.brand_ulid = brand;
    const r = await api.post<{ data: BulkImport; meta: { confirm_token: string } }>('/v1/qr-codes/bulk', {
      rows: p.rows,
      defaults,
    });
    setStaged({ data: r.data, token: r.meta.confirm_token });
  }

  async function confirm() {
    setError(null);
    try {
      const r = await api.post<{ data: BulkImport }>(`/v1/qr-codes/bulk/${staged!.data.ulid}/confirm`, {
        confirm_token: staged!.token,
      });
      setProgress(r.data);
    } catch (err) {
      setError(err);
    }
  }

  if (!refs.data) return <Loading />;
  const s = staged?.data;
  const valid = s?.valid_row_count ?? 0;
  const total = s?.total_rows ?? 0;
  const previewErrors = s?.preview_errors ?? [];
  return (
    <Page title="Bulk import">
      <p>
        Upload a CSV file with a header line. Columns: <code>slug</code> and <code>destination</code> (required),{' '}
        <code>name</code>, <code>domain_ulid</code>, <code>brand_ulid</code>, <code>style_ulid</code>,{' '}
        <code>status</code>. Nothing is created until you confirm.
      </p>
      <ErrorMessage error={refs.error} />
      <Form onSubmit={stage} submitLabel="Check the file" label="Upload a CSV file">
        <div class="field">
          <label for="csv-file">CSV file</label>
          <input
            id="csv-file"
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => {
              setFile((e.target as HTMLInputElement).files?.[0] ?? null);
              setStaged(null);
              setProgress(null);
            }}
          />
        </div>
        <div class="grid">
          <SelectField
            label="Default domain"
            value={domain}
            onValue={setDomain}
            options={refs.data.domains.map((d) => ({ value: d.ulid, label: d.host }))}
          />
          <SelectField
            label="Default brand"
            value={brand}
            onValue={setBrand}
            options={[{ value: '', label: 'None' }, ...refs.data.brands.map((b) => ({ value: b.ulid, label: b.name }))]}
          />
        </div>
      </Form>
      {parsed?.ignored.length ? <p class="muted">Ignored columns: {parsed.ignored.join(', ')}.</p> : null}
      {s && (
        <section aria-labelledby="staged-title">
          <h2 id="staged-title">Check before importing</h2>
          <p role="status">
            {total} rows read: {valid} can be created
            {total > valid
              ? `, ${total - valid} ${total - valid === 1 ? 'has' : 'have'} errors and will be skipped`
              : ''}
            .
          </p>
          {previewErrors.length > 0 && (
            <table>
              <caption>Rows with errors (line numbers count the header as line 1)</caption>
              <thead>
                <tr>
                  <th scope="col" class="num">
                    Line
                  </th>
                  <th scope="col">Field</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                {previewErrors.map((e, i) => (
                  <tr key={i}>
                    <td class="num">{e.row + 2}</td>
                    <td>
                      <code>{e.field}</code>
                    </td>
                    <td>{e.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {!progress && (
            <div class="row">
              <button type="button" class="btn primary" disabled={!valid} onClick={confirm}>
                Import {valid} codes
              </button>
              <button type="button" class="btn" onClick={() => setStaged(null)}>
                Cancel
              </button>
            </div>
          )}
        </section>
      )}
      <ErrorMessage error={error} />
      {progress && (
        <section aria-labelledby="progress-title">
          <h2 id="progress-title">Import progress</h2>
          <label for="import-progress">{progress.progress_percent ?? 0}% done</label>
          <progress id="import-progress" max={100} value={progress.progress_percent ?? 0} />
          {DONE.includes(progress.status) ? (
            <StatusMessage>
              Import {progress.status.replace(/_/g, ' ')}: {progress.success_count} created, {progress.failed_count}{' '}
              failed, {progress.skipped_count} skipped. <a href={`/app/o/${props.org}/codes`}>See the codes</a>
            </StatusMessage>
          ) : (
            <p class="muted">Status: {progress.status}…</p>
          )}
        </section>
      )}
    </Page>
  );
}
