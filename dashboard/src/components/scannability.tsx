// The scannability verdict of a style (stored with it, or from a preview): pass, warn or fail,
// the measurements and the reasons, each a stable code the service documents, shown in words.
import type { Scannability } from '../types';

const REASONS: Record<string, string> = {
  not_decodable: 'A decoder could not read the rendered symbol.',
  decoded_text_mismatch: 'The rendered symbol decoded to another text.',
  low_contrast: 'The contrast between the dots and the background is below 3:1.',
  quiet_zone_missing: 'There is less than one module of quiet zone (empty margin) around the symbol.',
  logo_exceeds_error_correction: 'The logo hides more modules than the error correction can restore.',
  contrast_below_recommended: 'The contrast is below the recommended 4.5:1.',
  quiet_zone_narrow: 'The quiet zone is narrower than the recommended 4 modules.',
  logo_near_error_correction_limit: 'The logo hides over half of what the error correction can restore.',
  decoder_missed_symbol: 'One of the three decoder families could not read the full-size symbol.',
  capture_not_decoded: 'A decoder family could not read a phone-like capture at the declared print size.',
  inverted_colors: 'Light dots on a dark background: not every scanner reads inverted codes.',
  transparent_background: 'The background is transparent: judged on white, the surface it is printed on decides.',
};

/** A reason code in words; an unknown code is shown as it is. */
function reasonText(code: string): string {
  return REASONS[code] ?? code.replace(/_/g, ' ');
}

const VERDICTS = {
  pass: { label: 'Scans well', badge: 'active' },
  warn: { label: 'Scans, with warnings', badge: 'paused' },
  fail: { label: 'Does not scan reliably', badge: 'failed' },
} as const;

export function VerdictBadge(props: { verdict: Scannability['verdict'] }) {
  const v = VERDICTS[props.verdict];
  return <span class={`badge ${v.badge}`}>{v.label}</span>;
}

export function ReasonList(props: { reasons: string[] }) {
  if (!props.reasons.length) return null;
  return (
    <ul class="reasons">
      {props.reasons.map((r) => (
        <li key={r} data-reason={r}>
          {reasonText(r)}
        </li>
      ))}
    </ul>
  );
}

function percent(n: number | null): string {
  return n === null ? '—' : `${(n * 100).toFixed(1)} %`;
}

export function ScannabilityReport(props: { scannability: Scannability; title?: string; testId?: string }) {
  const s = props.scannability;
  return (
    <div class="scannability" data-testid={props.testId ?? 'scannability'} data-verdict={s.verdict}>
      <p>
        <strong>{props.title ?? 'Scannability'}:</strong> <VerdictBadge verdict={s.verdict} />
      </p>
      <ReasonList reasons={s.reasons} />
      <dl class="facts small">
        <dt>Decoded</dt>
        <dd>{s.decoded ? 'yes' : 'no'}</dd>
        <dt>Contrast</dt>
        <dd>{s.contrast_ratio === null ? '—' : `${s.contrast_ratio.toFixed(2)}:1`}</dd>
        <dt>Quiet zone</dt>
        <dd>{s.quiet_zone_modules === null ? '—' : `${s.quiet_zone_modules} modules`}</dd>
        <dt>Logo coverage</dt>
        <dd>{percent(s.logo_coverage)}</dd>
        <dt>Error correction</dt>
        <dd>{s.error_correction ?? '—'}</dd>
        {s.robustness_margin !== undefined && (
          <>
            <dt>Robustness margin</dt>
            <dd data-testid="robustness-margin">{s.robustness_margin === null ? '—' : `${s.robustness_margin}×`}</dd>
            <dt>Smallest print size</dt>
            <dd data-testid="smallest-print-size">
              {s.smallest_print_size_mm == null
                ? '—'
                : `${s.smallest_print_size_mm} mm at ${(s.print?.distance_mm ?? 200) / 10} cm`}
            </dd>
          </>
        )}
      </dl>
      {s.misses && s.misses.length > 0 && (
        <p class="small muted" data-testid="misses">
          Not read: {s.misses.map((m) => `${m.family} (${m.capture})`).join(', ')}
        </p>
      )}
    </div>
  );
}
