// Imports from another link service (POST /v1/imports, docs/imports.md): the member picks the
// source, gives its address and key or its export file and the options, the service previews the
// mapping, the member confirms with the token the start answered with (shown to this page only),
// and the list follows every import's progress (links, scans, ETA) until it ends. A failed import
// is resumed from where it stopped, with the credentials given again; the report lists every link
// that could not keep its slug or domain.
import { useEffect, useState } from 'preact/hooks';
import { orgApi } from '../api';
import {
  CheckboxField,
  EmptyRow,
  ErrorMessage,
  Form,
  formatDate,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextField,
  useLoad,
} from '../components/ui';
import { useImportDefaults } from '../components/org-list';
import type { LinkImport, Membership, Paged } from '../types';

type Source = LinkImport['source'];
type Preview = NonNullable<LinkImport['preview']>;
type LinkReport = NonNullable<Preview['mappings']>[number];

/** Each source, how it is read, and the labels of what it needs. */
const SOURCES: Record<Source, { label: string; api?: 'key' | 'token'; file?: string; urlRequired?: boolean }> = {
  shlink: { label: 'Shlink (REST API v3)', api: 'key', urlRequired: true },
  bitly: { label: 'Bitly (API v4 or CSV export)', api: 'token', file: 'Bitly CSV export' },
  kutt: { label: 'Kutt (API v2)', api: 'key', urlRequired: true },
  dub: { label: 'Dub (API or CSV export)', api: 'token', file: 'Dub CSV export' },
  yourls: { label: 'YOURLS (database export)', file: 'yourls_url table (CSV or SQL dump)' },
  csv: { label: 'CSV file (long_url, short_code, domain, title, tags, created_at)', file: 'CSV file' },
};
const FINAL = ['completed', 'completed_with_errors', 'failed', 'expired'];
const POLL_MS = 1000;

function FileField(props: { id: string; label: string; onFile: (f: File | null) => void; hint?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="file"
        accept=".csv,.sql,.txt,text/csv"
        aria-describedby={props.hint ? `${props.id}-hint` : undefined}
        onChange={(e) => props.onFile((e.target as HTMLInputElement).files?.[0] ?? null)}
      />
      {props.hint && (
        <small class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </small>
      )}
    </div>
  );
}

function eta(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '';
  if (seconds < 60) return `about ${seconds} s left`;
  return `about ${Math.ceil(seconds / 60)} min left`;
}

/** The problems of links (clashes, unmappable fields, the report) as one table. */
function LinkTable(props: { caption: string; links: LinkReport[] }) {
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Source link</th>
          <th scope="col">Becomes</th>
          <th scope="col">Status</th>
          <th scope="col">Problems</th>
        </tr>
      </thead>
      <tbody>
        {props.links.map((l, i) => (
          <tr key={i}>
            <td class="mono">
              {l.source_domain ? `${l.source_domain}/` : ''}
              {l.short_code}
            </td>
            <td class="mono">{l.slug ? `${l.domain_host ?? ''}/${l.slug.split('/').pop()}` : '—'}</td>
            <td>{l.status}</td>
            <td>
              {(l.problems ?? []).map((p, j) => (
                <div key={j}>
                  <code>{p.field}</code>: {p.message}
                </div>
              ))}
            </td>
          </tr>
        ))}
        {!props.links.length && <EmptyRow cols={4}>None.</EmptyRow>}
      </tbody>
    </table>
  );
}

/** What the preview found, and the confirmation (with the token, when this page started it). */
function PreviewPanel(props: { imp: LinkImport; token?: string; onConfirm: () => Promise<void> }) {
  const p = props.imp.preview!;
  const c = p.counts ?? {};
  const limit = p.code_limit;
  const [error, setError] = useState<unknown>(null);
  return (
    <section aria-labelledby={`preview-${props.imp.ulid}`} class="card">
      <h3 id={`preview-${props.imp.ulid}`}>Preview of the {SOURCES[props.imp.source].label.split(' (')[0]} import</h3>
      <p role="status">
        {c.links ?? 0} links read: {c.new ?? 0} new, {c.matched ?? 0} imported before (only newer scans are added),{' '}
        {c.clashes ?? 0} slug clashes ({c.renamed ?? 0} renamed), {c.domains_not_kept ?? 0} domains not kept,{' '}
        {c.skipped ?? 0} skipped, {c.failed ?? 0} failed, {c.unmappable_links ?? 0} with fields that have no equivalent;{' '}
        {(c.scans_expected ?? 0).toLocaleString()} scans to import.
      </p>
      {limit && (
        <p class={limit.exceeded ? 'message error' : 'muted'}>
          Codes: {limit.live} live + {limit.new} new
          {limit.limit === null ? ' (no limit on this plan)' : ` of the plan’s ${limit.limit}`}
          {limit.exceeded ? ': the import would exceed the plan’s code limit.' : '.'}
        </p>
      )}
      <LinkTable caption="First links and what they become" links={p.mappings ?? []} />
      {!!p.clashes?.length && <LinkTable caption="Slug clashes" links={p.clashes} />}
      {!!p.unmappable?.length && <LinkTable caption="Fields with no equivalent here" links={p.unmappable} />}
      <ErrorMessage error={error} />
      {props.token ? (
        <button
          type="button"
          class="btn primary"
          onClick={() => props.onConfirm().catch(setError)}
          disabled={limit?.exceeded}
        >
          Import {c.new ?? 0} new links
        </button>
      ) : (
        <p class="muted">
          Its confirm token was shown to the page that started it; start the import again here to confirm it.
        </p>
      )}
    </section>
  );
}

/** Resuming a failed import: an API source needs its credentials again (they were wiped). */
function ResumeForm(props: { imp: LinkImport; onResume: (credentials?: Record<string, string>) => Promise<void> }) {
  const src = SOURCES[props.imp.source];
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  return (
    <Form
      label={`Resume the ${props.imp.source} import`}
      submitLabel="Resume from where it stopped"
      onSubmit={() =>
        props.onResume(
          src.api && secret
            ? { ...(url ? { url } : {}), [src.api === 'key' ? 'api_key' : 'token']: secret }
            : undefined,
        )
      }
    >
      {src.api && (
        <div class="grid">
          <TextField label="Source address again" type="url" value={url} onValue={setUrl} />
          <TextField
            label={src.api === 'key' ? 'API key again' : 'API token again'}
            type="password"
            autoComplete="off"
            value={secret}
            onValue={setSecret}
            hint="Credentials are wiped when an import fails; an import of an export file resumes without them."
          />
        </div>
      )}
    </Form>
  );
}

function ImportRow(props: { org: string; imp: LinkImport; token?: string; onChange: () => void }) {
  const api = orgApi(props.org);
  const { imp } = props;
  const pr = imp.progress;
  const [report, setReport] = useState<LinkReport[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const running = !FINAL.includes(imp.status) && imp.status !== 'staged';
  async function confirm() {
    const r = await api.post<{ data: LinkImport }>(`/v1/imports/${imp.ulid}/confirm`, { confirm_token: props.token });
    if (r.data) props.onChange();
  }
  async function resume(credentials?: Record<string, string>) {
    const r = await api.post<{ data: LinkImport }>(
      `/v1/imports/${imp.ulid}/resume`,
      credentials ? { credentials } : {},
    );
    if (r.data) props.onChange();
  }
  return (
    <li class="card" data-testid="import" aria-labelledby={`import-${imp.ulid}`}>
      <h3 id={`import-${imp.ulid}`}>
        {SOURCES[imp.source].label.split(' (')[0]} import of {formatDate(imp.created_at)}:{' '}
        <span class={`badge ${imp.status}`}>{imp.status.replace(/_/g, ' ')}</span>
      </h3>
      {imp.confirmed_at && (
        <>
          <label for={`progress-${imp.ulid}`}>
            {pr.percent ?? 0}% done{running && pr.eta_seconds ? `, ${eta(pr.eta_seconds)}` : ''}
          </label>
          <progress id={`progress-${imp.ulid}`} max={100} value={pr.percent ?? 0} />
          <p data-testid="import-counts">
            Links: {pr.links_done ?? 0} of {pr.links_total ?? 0} ({pr.links_created ?? 0} created,{' '}
            {pr.links_matched ?? 0} matched, {pr.links_renamed ?? 0} renamed, {pr.links_skipped ?? 0} skipped,{' '}
            {pr.links_failed ?? 0} failed). Scans: {(pr.scans_done ?? 0).toLocaleString()} of{' '}
            {(pr.scans_total ?? 0).toLocaleString()}.
          </p>
        </>
      )}
      {imp.status === 'previewing' && <p class="muted">Reading the source for the preview…</p>}
      {imp.status === 'expired' && <p class="muted">Not confirmed within 24 hours: nothing was imported.</p>}
      {imp.error_message && (
        <div class="message error" role="alert">
          <p>
            {imp.status === 'failed' ? 'The import failed: ' : ''}
            {imp.error_message}
          </p>
        </div>
      )}
      {imp.status === 'staged' && imp.preview && <PreviewPanel imp={imp} token={props.token} onConfirm={confirm} />}
      {imp.resumable && <ResumeForm imp={imp} onResume={resume} />}
      {(imp.status === 'completed' || imp.status === 'completed_with_errors' || imp.status === 'failed') &&
        imp.confirmed_at && (
          <div class="row">
            <button
              type="button"
              class="btn small"
              onClick={() =>
                api
                  .get<{ data: LinkReport[] }>(`/v1/imports/${imp.ulid}/report`)
                  .then((r) => setReport(r.data), setError)
              }
            >
              Show the report
            </button>
            <a class="btn small" href={`/app/o/${props.org}/codes`}>
              See the codes
            </a>
          </div>
        )}
      <ErrorMessage error={error} />
      {report && (
        <LinkTable caption="Links that lost their slug or domain, a field, were skipped or failed" links={report} />
      )}
    </li>
  );
}

export default function LinkImports(props: { org: string; membership: Membership }) {
  const api = orgApi(props.org);
  const refs = useImportDefaults(props.org);
  const list = useLoad(() => api.get<Paged<LinkImport>>('/v1/imports?limit=20'), [props.org]);
  // The confirm tokens of the imports this page started (the service shows each once).
  const [tokens, setTokens] = useState<Record<string, string>>({});
  const [source, setSource] = useState<Source>('shlink');
  const [fromFile, setFromFile] = useState(false);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [logFile, setLogFile] = useState<File | null>(null);
  const [domain, setDomain] = useState('');
  const [brand, setBrand] = useState('');
  const [keepDates, setKeepDates] = useState(true);
  const [history, setHistory] = useState(true);
  const [archived, setArchived] = useState(false);
  const [orphans, setOrphans] = useState(false);
  const [onClash, setOnClash] = useState('rename');
  const [notice, setNotice] = useState('');

  const src = SOURCES[source];
  const usesApi = !!src.api && !(src.file && fromFile);
  const usesFile = !!src.file && (!src.api || fromFile);
  const imports = list.data?.data ?? [];

  // Follows the imports until every one of them has ended or waits for a confirmation.
  useEffect(() => {
    if (!imports.some((i) => !FINAL.includes(i.status) && i.status !== 'staged')) return;
    const t = setTimeout(() => list.reload(), POLL_MS);
    return () => clearTimeout(t);
  }, [list.data]);

  async function start() {
    setNotice('');
    const body: Record<string, unknown> = { source };
    if (usesApi) {
      const credentials: Record<string, string> = {};
      if (url) credentials.url = url;
      if (secret) credentials[src.api === 'key' ? 'api_key' : 'token'] = secret;
      body.credentials = credentials;
    }
    if (usesFile) {
      if (!file) throw new Error(`Choose the ${src.file} first.`);
      body.file = await file.text();
      if (source === 'yourls' && logFile) body.log_file = await logFile.text();
    }
    const options: Record<string, unknown> = { keep_created_at: keepDates, history, on_clash: onClash };
    if (domain) options.domain_ulid = domain;
    if (brand) options.brand_ulid = brand;
    if (source === 'bitly' && usesApi) options.archived = archived;
    if (source === 'shlink') options.orphan_visits = orphans;
    body.options = options;
    const r = await api.post<{ data: LinkImport; meta: { confirm_token: string } }>('/v1/imports', body);
    setTokens((t) => ({ ...t, [r.data.ulid]: r.meta.confirm_token }));
    setSecret('');
    setNotice('The source is being read for the preview; nothing is imported until you confirm.');
    list.reload();
  }

  if (!refs.data) return <Loading />;
  return (
    <Page title="Import from a link service">
      <p>
        Bring short links and their scan history from Shlink, Bitly, Kutt, YOURLS, Dub or a CSV file. Slugs and domains
        are kept where they can be; nothing is created until you have seen the preview and confirmed. Running an import
        again adds only newer links and scans.
      </p>
      <ErrorMessage error={refs.error} />
      <Form onSubmit={start} submitLabel="Read the source" label="Start an import">
        <div class="grid">
          <SelectField
            label="Source"
            value={source}
            onValue={(v) => {
              setSource(v as Source);
              setFromFile(false);
            }}
            options={Object.entries(SOURCES).map(([value, s]) => ({ value, label: s.label }))}
          />
          {src.api && src.file && (
            <SelectField
              label="Read from"
              value={fromFile ? 'file' : 'api'}
              onValue={(v) => setFromFile(v === 'file')}
              options={[
                { value: 'api', label: 'Its API' },
                { value: 'file', label: 'Its CSV export' },
              ]}
            />
          )}
        </div>
        {usesApi && (
          <div class="grid">
            <TextField
              label="Source address"
              type="url"
              value={url}
              onValue={setUrl}
              placeholder={source === 'bitly' ? 'https://api-ssl.bitly.com' : 'https://s.example'}
              hint={src.urlRequired ? 'The address of its API, e.g. https://s.example' : 'Optional: its API address'}
            />
            <TextField
              label={src.api === 'key' ? 'API key' : 'API token'}
              type="password"
              autoComplete="off"
              value={secret}
              onValue={setSecret}
              hint="Sealed while the import runs and wiped when it ends."
            />
          </div>
        )}
        {usesFile && (
          <div class="grid">
            <FileField id="import-file" label={src.file!} onFile={setFile} />
            {source === 'yourls' && (
              <FileField
                id="import-log-file"
                label="yourls_log table (CSV)"
                onFile={setLogFile}
                hint="Optional with a CSV export: each logged click becomes a scan."
              />
            )}
          </div>
        )}
        <fieldset>
          <legend>Options</legend>
          <div class="grid">
            <SelectField
              label="Domain of links whose domain is not here"
              value={domain}
              onValue={setDomain}
              options={[
                { value: '', label: 'The shared domain' },
                ...refs.data.domains.map((d) => ({ value: d.ulid, label: d.host })),
              ]}
            />
            <SelectField
              label="Brand"
              value={brand}
              onValue={setBrand}
              options={[
                { value: '', label: 'None' },
                ...refs.data.brands.map((b) => ({ value: b.ulid, label: b.name })),
              ]}
            />
            <SelectField
              label="When a slug is taken"
              value={onClash}
              onValue={setOnClash}
              options={[
                { value: 'rename', label: 'Rename it with a suffix (-2, -3, …)' },
                { value: 'skip', label: 'Skip the link' },
                { value: 'fail', label: 'Stop: import nothing' },
              ]}
            />
          </div>
          <CheckboxField label="Keep the creation dates" checked={keepDates} onChecked={setKeepDates} />
          <CheckboxField label="Import the scan history" checked={history} onChecked={setHistory} />
          {source === 'bitly' && usesApi && (
            <CheckboxField label="Archived Bitlinks too" checked={archived} onChecked={setArchived} />
          )}
          {source === 'shlink' && (
            <CheckboxField
              label="Orphan visits too"
              checked={orphans}
              onChecked={setOrphans}
              hint="Visits that matched no short URL, as the scans of one paused code, shlink-orphan-visits."
            />
          )}
        </fieldset>
      </Form>
      {notice && <StatusMessage>{notice}</StatusMessage>}
      <section aria-labelledby="imports-title">
        <h2 id="imports-title">Imports</h2>
        <ErrorMessage error={list.error} />
        {!list.data ? (
          <Loading />
        ) : imports.length ? (
          <ul class="imports">
            {imports.map((i) => (
              <ImportRow key={i.ulid} org={props.org} imp={i} token={tokens[i.ulid]} onChange={() => list.reload()} />
            ))}
          </ul>
        ) : (
          <p class="muted">No imports yet.</p>
        )}
      </section>
    </Page>
  );
}
