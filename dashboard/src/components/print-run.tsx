// A print run of the codes selected on the list (POST /v1/qr-codes/exports with their ulids, in
// the list's order): the API's options (format, size, one style for every code, GS1 compressed
// URIs), the run's progress until it completes, and its ZIP to download.
import { useEffect, useState } from 'preact/hooks';
import { orgApi } from '../api';
import type { QrCodeExport, QrStyle } from '../types';
import { CheckboxField, ErrorMessage, SelectField, StatusMessage, TextField } from './ui';

const POLL_MS = 700;
const DONE = ['completed', 'failed', 'expired'];

export function PrintRun(props: { org: string; codeUlids: string[]; styles: QrStyle[] }) {
  const api = orgApi(props.org);
  const [format, setFormat] = useState<QrCodeExport['format']>('svg');
  const [size, setSize] = useState('');
  const [style, setStyle] = useState('');
  const [gs1, setGs1] = useState(false);
  const [run, setRun] = useState<QrCodeExport | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  // Follows the run until it has completed or failed.
  useEffect(() => {
    if (!run || DONE.includes(run.status)) return;
    const t = setTimeout(() => {
      api.get<{ data: QrCodeExport }>(`/v1/qr-codes/exports/${run.ulid}`).then((r) => setRun(r.data), setError);
    }, POLL_MS);
    return () => clearTimeout(t);
  }, [run]);

  async function start(e: Event) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const body: Record<string, unknown> = { code_ulids: props.codeUlids, format, gs1_compressed: gs1 };
      if (size.trim()) body.size = Number(size);
      if (style) body.style_ulid = style;
      setRun((await api.post<{ data: QrCodeExport }>('/v1/qr-codes/exports', body)).data);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const n = props.codeUlids.length;
  return (
    <details class="print-run">
      <summary>Print run of the selection</summary>
      <form class="form" aria-label="Print run of the selected codes" onSubmit={start} noValidate>
        <div class="grid">
          <SelectField
            label="Format"
            value={format}
            onValue={(v) => setFormat(v as QrCodeExport['format'])}
            options={[
              { value: 'svg', label: 'SVG' },
              { value: 'png', label: 'PNG' },
              { value: 'pdf', label: 'PDF' },
            ]}
          />
          <TextField
            label="Size"
            type="number"
            min={64}
            max={4096}
            value={size}
            onValue={setSize}
            hint="Pixels (points for PDF), 64 to 4096; empty: 1024 px, 288 pt."
          />
          {props.styles.length > 0 && (
            <SelectField
              label="Style"
              value={style}
              onValue={setStyle}
              options={[
                { value: '', label: 'Each code’s own' },
                ...props.styles.map((s) => ({ value: s.ulid, label: s.name })),
              ]}
            />
          )}
        </div>
        <CheckboxField label="GS1 codes encode their compressed Digital Link URI" checked={gs1} onChecked={setGs1} />
        <ErrorMessage error={error} />
        <div class="row">
          <button type="submit" class="btn primary" disabled={!n || busy}>
            {busy ? 'Working…' : `Start a print run of ${n} ${n === 1 ? 'code' : 'codes'}`}
          </button>
        </div>
      </form>
      {run && (
        <div class="print-run-progress">
          <label for="print-run-progress">
            Print run of {run.total} {run.total === 1 ? 'code' : 'codes'}: {run.progress_percent}% done
          </label>
          <progress id="print-run-progress" max={100} value={run.progress_percent} />
          {run.status === 'completed' ? (
            <StatusMessage>
              Ready.{' '}
              <button
                type="button"
                class="btn small"
                onClick={() =>
                  api
                    .download(
                      `/v1/qr-codes/exports/${run.ulid}/download`,
                      `qr-codes-${run.ulid}.zip`,
                      'application/zip',
                    )
                    .catch(setError)
                }
              >
                Download the ZIP
              </button>
            </StatusMessage>
          ) : run.status === 'failed' || run.status === 'expired' ? (
            <div class="message error" role="alert">
              <p>
                The print run {run.status}
                {run.error_message ? `: ${run.error_message}` : '.'}
              </p>
            </div>
          ) : (
            <p class="muted">Status: {run.status}…</p>
          )}
        </div>
      )}
    </details>
  );
}
