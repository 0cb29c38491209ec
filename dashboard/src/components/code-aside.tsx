// Beside the code form: the QR code itself (rendered by the service from the chosen style, so the
// preview follows the style select before saving), the style's scannability verdict, downloads as
// SVG, PNG and PDF, and the public URL the symbol encodes.
import { useEffect, useState } from 'preact/hooks';
import { orgApi, query } from '../api';
import type { QrCode, QrStyle } from '../types';
import { ScannabilityReport } from './scannability';
import { CopyButton, ErrorMessage } from './ui';

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

export function CodeAside(props: {
  org: string;
  code: QrCode | null;
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
              <span class="mono">{c.public_url}</span> <CopyButton text={c.public_url} label="Copy the public URL" />
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
        <p class="muted">The code gets its QR code and public URL when it is created.</p>
      )}
    </aside>
  );
}
