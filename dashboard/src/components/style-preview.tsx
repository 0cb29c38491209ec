// The live preview of the style designer: the design rendered by the service after each pause in
// the changes, with its scannability verdict.
import { useEffect, useRef, useState } from 'preact/hooks';
import { orgApi } from '../api';
import { ScannabilityReport } from './scannability';
import { ErrorMessage } from './ui';
import type { Scannability, StyleConfig } from '../types';

/** Wait this long after the last change before asking for a preview. */
const PREVIEW_DELAY_MS = 300;

/** Drops undefined values and empty objects, so the config sent holds only what is set. */
export function clean<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clean) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = clean(v);
      if (c === undefined || (c && typeof c === 'object' && !Array.isArray(c) && !Object.keys(c).length)) continue;
      out[k] = c;
    }
    return out as T;
  }
  return value;
}
/** The preview of the config being designed: asked for after each pause in the changes. */
export function usePreview(org: string, config: StyleConfig, brandUlid: string) {
  const [state, setState] = useState<{
    image?: string;
    scannability?: Scannability;
    error?: unknown;
    busy: boolean;
  }>({ busy: true });
  const seq = useRef(0);
  const key = JSON.stringify({ config: clean(config), format: 'svg', brand_ulid: brandUlid || undefined });
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, busy: true }));
    const timer = setTimeout(() => {
      orgApi(org)
        .post<{ data: { image: string; scannability: Scannability } }>('/v1/qr-styles/preview', JSON.parse(key))
        .then(
          (r) => {
            if (mine !== seq.current) return;
            setState({
              image: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(r.data.image)}`,
              scannability: r.data.scannability,
              busy: false,
            });
          },
          (error: unknown) => mine === seq.current && setState((s) => ({ ...s, error, busy: false })),
        );
    }, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [org, key]);
  return state;
}

export type Preview = ReturnType<typeof usePreview>;

export function StylePreview(props: { preview: Preview }) {
  const { preview } = props;
  return (
    <aside class="preview" aria-label="Preview">
      <h2>Preview</h2>
      {preview.image ? (
        <img src={preview.image} alt="Preview of the style" width={240} height={240} data-testid="style-preview" />
      ) : (
        !preview.error && <p class="muted">Rendering…</p>
      )}
      <div aria-live="polite">
        {preview.busy ? (
          <p class="muted small">Checking…</p>
        ) : preview.error ? (
          <div data-testid="preview-error">
            <ErrorMessage error={preview.error} />
          </div>
        ) : (
          preview.scannability && <ScannabilityReport scannability={preview.scannability} />
        )}
      </div>
      {preview.scannability?.verdict === 'fail' && !preview.busy && (
        <p class="hint">A style that does not scan reliably cannot be saved.</p>
      )}
    </aside>
  );
}
