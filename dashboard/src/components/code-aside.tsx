// Beside the code form: the QR code itself (rendered by the service from the chosen style, so the
// preview follows the style select before saving), the style's scannability verdict, downloads as
// SVG, PNG and PDF, and the public URL the symbol encodes. A code not created yet is drawn from
// the form as it is filled in (POST /v1/qr-codes/preview): the would-be public URL or static payload.
import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, orgApi, query } from '../api';
import type { CodeImageDraft, CodeImagePreview, QrCode, QrStyle } from '../types';
import { ScannabilityReport } from './scannability';
import { CopyButton, ErrorMessage, UrlText } from './ui';

/** Wait this long after the last change of the form before drawing the draft again. */
const DRAFT_DELAY_MS = 400;

const FORMATS = [
  { format: 'svg', label: 'SVG', accept: 'image/svg+xml' },
  { format: 'png', label: 'PNG', accept: 'image/png' },
  { format: 'pdf', label: 'PDF', accept: 'application/pdf' },
] as const;

/** The code's image as an object URL, fetched again when the code or the chosen style changes. */
function useCodeImage(org: string, code: QrCode | null, styleUlid: string) {
  const [src, setSrc] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (!code) return;
    let live = true;
    let url: string | null = null;
    setError(null);
    orgApi(org)
      .blob(`/v1/qr-codes/${code.ulid}/image${query({ format: 'svg', style_ulid: styleUlid })}`, 'image/svg+xml')
      .then(
        (blob) => {
          if (!live) return;
          url = URL.createObjectURL(blob);
          setSrc(url);
        },
        (err: unknown) => live && setError(err),
      );
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
  }, [org, code?.ulid, code?.updated_at, styleUlid]);
  return { src, error };
}

/** The draft's image after each pause in the typing; null while the form lacks a slug or a domain. */
function useDraftImage(org: string, draft: CodeImageDraft | null) {
  const [state, setState] = useState<{ preview?: CodeImagePreview; error?: unknown; busy: boolean }>({ busy: false });
  const key = draft && draft.slug && draft.domain_ulid ? JSON.stringify(draft) : null;
  useEffect(() => {
    if (!key) {
      setState({ busy: false });
      return;
    }
    let live = true;
    setState((s) => ({ ...s, busy: true }));
    const timer = setTimeout(() => {
      orgApi(org)
        .post<{ data: CodeImagePreview }>('/v1/qr-codes/preview', { ...JSON.parse(key), format: 'svg', size: 240 })
        .then(
          (r) => live && setState({ preview: r.data, busy: false }),
          (error: unknown) => live && setState({ error, busy: false }),
        );
    }, DRAFT_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [org, key]);
  return { ...state, ready: !!key };
}

const FIELD_NAMES: Record<string, string> = { slug: 'the slug', domain_ulid: 'the domain', style_ulid: 'the style' };

/** The QR code of a code being created, drawn from the form before anything is saved. */
function DraftImage(props: { org: string; draft: CodeImageDraft | null }) {
  const d = useDraftImage(props.org, props.draft);
  const missing =
    d.error instanceof ApiFailure && d.error.status === 422
      ? Object.keys(d.error.body.errors ?? {}).map(
          (f) => FIELD_NAMES[f] ?? (f.startsWith('destination') ? 'the content' : f),
        )
      : null;
  return (
    <>
      <figure aria-busy={d.busy}>
        {d.preview && !d.error ? (
          <img
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(d.preview.image)}`}
            alt={`Preview of the QR code for ${d.preview.public_url ?? d.preview.text}`}
            width={240}
            height={240}
            data-testid="draft-image"
          />
        ) : (
          <p class="muted">
            {!d.ready
              ? 'Type a slug to see the QR code.'
              : missing
                ? `The QR code appears once ${[...new Set(missing)].join(', ')} ${missing.length > 1 ? 'are' : 'is'} filled in correctly.`
                : 'Rendering…'}
          </p>
        )}
        {d.error && !missing ? <ErrorMessage error={d.error} /> : null}
        {d.preview && !d.error && (
          <figcaption>
            {d.preview.public_url ? (
              <>
                Its public URL: <UrlText url={d.preview.public_url} testId="draft-public-url" />
              </>
            ) : (
              'A static code: the symbol holds the content itself.'
            )}
          </figcaption>
        )}
      </figure>
      <p class="hint" aria-live="polite">
        {d.preview && !d.error
          ? `Drawn as you type; nothing is saved yet.${d.preview.scannability.verdict === 'pass' ? '' : ' The symbol may not scan reliably with this style.'}`
          : ''}
      </p>
    </>
  );
}

export function CodeAside(props: {
  org: string;
  code: QrCode | null;
  /** The form as the preview endpoint takes it, while the code is not created yet. */
  draft?: CodeImageDraft | null;
  /** The style chosen in the form ('' for the default). */
  styleUlid: string;
  /** The organization's styles, when the member may read them (for the verdict). */
  styles: QrStyle[];
  stylesReadable: boolean;
}) {
  const c = props.code;
  const image = useCodeImage(props.org, c, props.styleUlid);
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const style = props.styles.find((s) => s.ulid === props.styleUlid);
  const slug = c ? c.slug.slice(c.slug.lastIndexOf('/') + 1) : '';

  async function save(format: string, accept: string) {
    setDownloadError(null);
    try {
      await orgApi(props.org).download(
        `/v1/qr-codes/${c!.ulid}/image${query({ format, style_ulid: props.styleUlid, download: 1 })}`,
        `${slug}.${format}`,
        accept,
      );
    } catch (err) {
      setDownloadError(err);
    }
  }

  return (
    <aside class="preview" aria-label="QR code">
      <h2>QR code</h2>
      {c ? (
        <>
          <figure>
            {image.src ? (
              <img
                src={image.src}
                alt={`QR code for ${c.public_url}`}
                width={240}
                height={240}
                data-testid="code-image"
              />
            ) : (
              !image.error && <p class="muted">Rendering…</p>
            )}
            <ErrorMessage error={image.error} />
            <figcaption>
              <UrlText url={c.public_url} testId="public-url" />{' '}
              <CopyButton text={c.public_url} label="Copy the public URL" />
            </figcaption>
          </figure>
          {props.styleUlid && style?.scannability && (
            <ScannabilityReport scannability={style.scannability} title={`Style ${style.name}`} />
          )}
          {!props.styleUlid && props.stylesReadable && (
            <p class="hint">The default style: black on white with a quiet zone of 4 modules.</p>
          )}
          {props.styleUlid !== (c.style?.ulid ?? '') && (
            <p class="hint">
              {props.styleUlid
                ? 'The preview shows the chosen style; save to keep it.'
                : 'The preview shows the saved style; save to use the default.'}
            </p>
          )}
          <div class="row downloads" role="group" aria-label="Download the QR code">
            <span>Download</span>
            {FORMATS.map((f) => (
              <button
                key={f.format}
                type="button"
                class="btn small"
                onClick={() => save(f.format, f.accept)}
                aria-label={`Download ${f.label}`}
              >
                {f.label}
              </button>
            ))}
          </div>
          <ErrorMessage error={downloadError} />
        </>
      ) : (
        <DraftImage org={props.org} draft={props.draft ?? null} />
      )}
    </aside>
  );
}
