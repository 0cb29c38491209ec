// The live preview of the style designer: the design rendered by the service after each pause in
// the changes, with its scannability verdict.
import { useEffect, useRef, useState } from 'preact/hooks';
import { orgApi } from '../api';
import { ScannabilityReport } from './scannability';
import { ErrorMessage } from './ui';
import type { Scannability, StyleConfig } from '../types';

/** Wait this long after the last change before asking for a preview (with the quick check). */
const PREVIEW_DELAY_MS = 300;
/** And this long before asking for the full verdict (every decoder, phone-like captures). */
const FULL_VERDICT_DELAY_MS = 1200;

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
/**
 * The preview of the config being designed: the image and the quick check after each short pause in
 * the changes, the full verdict after a longer one.
 */
export function usePreview(org: string, config: StyleConfig, brandUlid: string) {
  const [state, setState] = useState<{
    image?: string;
    quick?: Scannability;
    scannability?: Scannability;
    error?: unknown;
    busy: boolean;
  }>({ busy: true });
  const seq = useRef(0);
  const key = JSON.stringify({ config: clean(config), format: 'svg', brand_ulid: brandUlid || undefined });
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, busy: true }));
    const ask = (check: 'quick' | 'full') =>
      orgApi(org).post<{ data: { image: string; scannability: Scannability } }>('/v1/qr-styles/preview', {
        ...JSON.parse(key),
        check,
      });
    const failed = (error: unknown) => mine === seq.current && setState((s) => ({ ...s, error, busy: false }));
    const timer = setTimeout(() => {
      ask('quick').then((r) => {
        if (mine !== seq.current) return;
        setState((s) => ({
          image: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(r.data.image)}`,
          quick: r.data.scannability,
          // A full verdict of this same config (it arrived first) stays.
          scannability: s.scannability,
          busy: false,
        }));
      }, failed);
    }, PREVIEW_DELAY_MS);
    const fullTimer = setTimeout(() => {
      ask('full').then((r) => {
        if (mine !== seq.current) return;
        setState((s) => ({ ...s, scannability: r.data.scannability }));
      }, failed);
    }, FULL_VERDICT_DELAY_MS);
    setState((s) => ({ ...s, scannability: undefined }));
    return () => {
      clearTimeout(timer);
      clearTimeout(fullTimer);
    };
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
        ) : preview.scannability ? (
          <ScannabilityReport scannability={preview.scannability} />
        ) : (
          preview.quick && (
            <ScannabilityReport
              scannability={preview.quick}
              title="Quick check (the full verdict follows when you pause)"
              testId="scannability-quick"
            />
          )
        )}
      </div>
      {preview.scannability?.verdict === 'fail' && !preview.busy && (
        <p class="hint">A style that does not scan reliably cannot be saved.</p>
      )}
    </aside>
  );
}
