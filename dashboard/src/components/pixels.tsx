// The tracking pixels of a code or a brand: up to 10 rows of provider and id, each id checked by
// the service (its 422 names the expected form on tracking_pixels.<i>.id, shown under the row).
import { enumValues, type PixelProvider, type TrackingPixel } from '../types';
import { SelectField, TextField } from './ui';

export const MAX_PIXELS = 10;

const PROVIDER_LABELS: Record<PixelProvider, string> = {
  meta: 'Meta',
  ga4: 'Google Analytics 4',
  google_ads: 'Google Ads',
  linkedin: 'LinkedIn',
  tiktok: 'TikTok',
  x: 'X',
  pinterest: 'Pinterest',
  custom: 'Image pixel (https URL)',
};

const PROVIDERS = enumValues<PixelProvider>({
  meta: true,
  ga4: true,
  google_ads: true,
  linkedin: true,
  tiktok: true,
  x: true,
  pinterest: true,
  custom: true,
});

export function PixelsEditor(props: {
  value: TrackingPixel[];
  onChange: (pixels: TrackingPixel[]) => void;
  /** The service's message for a field (`tracking_pixels`, `tracking_pixels.<i>.id`). */
  error?: (field: string) => string | undefined;
  disabled?: boolean;
}) {
  const { value, onChange } = props;
  const setAt = (i: number, patch: Partial<TrackingPixel>) =>
    onChange(value.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  const listError = props.error?.('tracking_pixels');
  return (
    <div class="pixels">
      {value.map((p, i) => (
        <div class="grid pixel" key={i}>
          <SelectField
            label={`Pixel ${i + 1}: provider`}
            value={p.provider}
            onValue={(v) => setAt(i, { provider: v as PixelProvider })}
            options={PROVIDERS.map((v) => ({ value: v, label: PROVIDER_LABELS[v] }))}
            error={props.error?.(`tracking_pixels.${i}.provider`)}
          />
          <TextField
            label={`Pixel ${i + 1}: ${p.provider === 'custom' ? 'URL' : 'id'}`}
            value={p.id}
            onValue={(v) => setAt(i, { id: v })}
            error={props.error?.(`tracking_pixels.${i}.id`)}
          />
          <div class="field">
            <button
              type="button"
              class="btn small"
              disabled={props.disabled}
              onClick={() => onChange(value.filter((_, j) => j !== i))}
            >
              Remove pixel {i + 1}
            </button>
          </div>
        </div>
      ))}
      {listError && <p class="field-error">{listError}</p>}
      <button
        type="button"
        class="btn small"
        disabled={props.disabled || value.length >= MAX_PIXELS}
        onClick={() => onChange([...value, { provider: 'meta', id: '' }])}
      >
        Add a pixel
      </button>
    </div>
  );
}

/** Pixels as the API returns them (provider typed as a string on output; always one of PROVIDERS). */
export function pixelsOf(v: { provider: string; id: string }[] | null | undefined): TrackingPixel[] | null {
  return v ? (v as TrackingPixel[]) : null;
}
