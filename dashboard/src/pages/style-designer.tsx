// The style designer: every option of a style (qr-code-styling's names plus the frame) with a live
// preview rendered by the service and its scannability verdict as you change it; create, save and
// delete. The service checks every save: a style that fails is refused (422 style_not_scannable)
// and its reasons are shown.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure, orgApi } from '../api';
import { ReasonList, ScannabilityReport } from '../components/scannability';
import {
  CheckboxField,
  ConfirmButton,
  ErrorMessage,
  Loading,
  Page,
  SelectField,
  StatusMessage,
  TextField,
  useLoad,
} from '../components/ui';
import { can } from '../session';
import type { Brand, Gradient, Membership, PaintOptions, Paged, QrStyle, Scannability, StyleConfig } from '../types';
// The option names and limits are the service's own (a few constants; nothing else of the server
// is bundled).
import {
  CORNER_DOT_TYPES,
  CORNER_SQUARE_TYPES,
  DOT_TYPES,
  FRAME_TEXT_MAX,
  LOGO_MAX_BYTES,
  type CornerDotType,
  type CornerSquareType,
  type DotType,
  type ErrorCorrectionLevel,
  type FrameStyle,
} from '../../../server/rendering/style';

const LEVELS = [
  { value: 'L', label: 'L: 7 % may be damaged' },
  { value: 'M', label: 'M: 15 % (default)' },
  { value: 'Q', label: 'Q: 25 %' },
  { value: 'H', label: 'H: 30 %' },
];
const FRAME_STYLES = [
  { value: 'none', label: 'None' },
  { value: 'box', label: 'Box: a border, the text below' },
  { value: 'banner', label: 'Banner: a filled band with the text' },
];
/** Wait this long after the last change before asking for a preview (with the quick check). */
const PREVIEW_DELAY_MS = 300;
/** And this long before asking for the full verdict (every decoder, phone-like captures). */
const FULL_VERDICT_DELAY_MS = 1200;

/** A new style starts as the service's defaults, written out so every control shows its value. */
const NEW_CONFIG: StyleConfig = {
  width: 300,
  height: 300,
  qrOptions: { errorCorrectionLevel: 'M' },
  dotsOptions: { type: 'square', color: '#000000' },
  cornersSquareOptions: { type: 'square', color: '#000000' },
  cornersDotOptions: { type: 'square', color: '#000000' },
  backgroundOptions: { color: '#ffffff' },
};

const options = (values: readonly string[]) => values.map((v) => ({ value: v, label: v }));
const num = (v: string): number | undefined => (v.trim() === '' || !Number.isFinite(Number(v)) ? undefined : Number(v));
const str = (n: number | undefined): string => (n === undefined ? '' : String(n));

/** #rgb or #rrggbb as #rrggbb for the colour picker; anything else (brand:…, alpha) has no swatch. */
function pickerValue(color: string | undefined): string | null {
  if (!color) return null;
  if (/^#[0-9a-f]{6}$/i.test(color)) return color.toLowerCase();
  const m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(color);
  return m ? `#${m[1]}${m[1]}${m[2]}${m[2]}${m[3]}${m[3]}`.toLowerCase() : null;
}

/** Drops undefined values and empty objects, so the config sent holds only what is set. */
function clean<T>(value: T): T {
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

/** A colour as text (#rrggbb, #rgb, #rrggbbaa or brand:<name>) with a picker beside it. */
function ColorField(props: { label: string; value: string | undefined; onValue: (v: string) => void; hint?: string }) {
  const id = useId();
  const swatch = pickerValue(props.value);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <div class="color-input">
        <input
          type="color"
          value={swatch ?? '#000000'}
          aria-label={`${props.label} picker`}
          onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
        />
        <input
          id={id}
          value={props.value ?? ''}
          spellcheck={false}
          onInput={(e) => props.onValue((e.target as HTMLInputElement).value.trim())}
          aria-describedby={props.hint ? `${id}-hint` : undefined}
        />
      </div>
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

/**
 * A number typed freely: the text is kept as typed ("0." on the way to "0.5") and the number it
 * reads as is reported; undefined when empty or not a number.
 */
function NumberField(props: {
  label: string;
  value: number | undefined;
  onValue: (v: number | undefined) => void;
  min?: number;
  max?: number;
  step?: number;
  hint?: string;
}) {
  const [text, setText] = useState(str(props.value));
  useEffect(() => {
    if (num(text) !== props.value) setText(str(props.value));
  }, [props.value]);
  return (
    <TextField
      label={props.label}
      type="number"
      min={props.min}
      max={props.max}
      hint={props.hint}
      value={text}
      onValue={(v) => {
        setText(v);
        props.onValue(num(v));
      }}
      {...{ step: props.step ?? 'any' }}
    />
  );
}

const RADIANS = Math.PI / 180;

function GradientEditor(props: { label: string; gradient: Gradient; onChange: (g: Gradient) => void }) {
  const g = props.gradient;
  const stops = g.colorStops;
  const setStop = (i: number, patch: Partial<Gradient['colorStops'][number]>) =>
    props.onChange({ ...g, colorStops: stops.map((s, j) => (j === i ? { ...s, ...patch } : s)) });
  return (
    <div class="gradient">
      {g.type === 'linear' && (
        <NumberField
          label={`${props.label}: angle (degrees)`}
          min={-360}
          max={360}
          value={Math.round(((g.rotation ?? 0) / RADIANS) * 10) / 10}
          onValue={(v) => props.onChange({ ...g, rotation: (v ?? 0) * RADIANS })}
        />
      )}
      {stops.map((s, i) => (
        <div class="grid stop" key={i}>
          <ColorField
            label={`${props.label}: colour ${i + 1}`}
            value={s.color}
            onValue={(color) => setStop(i, { color })}
          />
          <NumberField
            label={`${props.label}: position ${i + 1} (0 to 1)`}
            min={0}
            max={1}
            value={s.offset}
            onValue={(v) => setStop(i, { offset: Math.min(1, Math.max(0, v ?? 0)) })}
          />
          {stops.length > 2 && (
            <div class="field">
              <button
                type="button"
                class="btn small"
                onClick={() => props.onChange({ ...g, colorStops: stops.filter((_, j) => j !== i) })}
              >
                Remove colour {i + 1}
              </button>
            </div>
          )}
        </div>
      ))}
      {stops.length < 8 && (
        <button
          type="button"
          class="btn small"
          onClick={() =>
            props.onChange({ ...g, colorStops: [...stops, { offset: 1, color: stops[stops.length - 1].color }] })
          }
        >
          Add a colour to the {props.label.toLowerCase()} gradient
        </button>
      )}
    </div>
  );
}

type PaintMode = 'color' | 'linear' | 'radial' | 'transparent';

/** A plain colour or a gradient (and for the background, transparent). */
function PaintEditor(props: {
  label: string;
  paint: PaintOptions;
  onChange: (p: PaintOptions) => void;
  transparent?: boolean;
}) {
  const p = props.paint;
  const mode: PaintMode = p.gradient ? p.gradient.type : p.color === 'transparent' ? 'transparent' : 'color';
  function setMode(next: PaintMode) {
    const base = p.gradient?.colorStops[0]?.color ?? (p.color && p.color !== 'transparent' ? p.color : '#000000');
    if (next === 'color') props.onChange({ color: base });
    else if (next === 'transparent') props.onChange({ color: 'transparent' });
    else {
      props.onChange({
        gradient: {
          type: next,
          rotation: next === 'linear' ? (p.gradient?.rotation ?? 0) : undefined,
          colorStops: p.gradient?.colorStops ?? [
            { offset: 0, color: base },
            { offset: 1, color: '#1d4ed8' },
          ],
        },
      });
    }
  }
  const modes = [
    { value: 'color', label: 'Colour' },
    { value: 'linear', label: 'Linear gradient' },
    { value: 'radial', label: 'Radial gradient' },
    ...(props.transparent ? [{ value: 'transparent', label: 'Transparent' }] : []),
  ];
  return (
    <>
      <SelectField
        label={`${props.label}: fill`}
        value={mode}
        onValue={(v) => setMode(v as PaintMode)}
        options={modes}
      />
      {mode === 'color' && (
        <ColorField
          label={`${props.label} colour`}
          value={p.color}
          onValue={(color) => props.onChange({ color })}
          hint="#rrggbb, #rgb, #rrggbbaa, or brand:<name> for a colour of the brand kit."
        />
      )}
      {p.gradient && (
        <GradientEditor
          label={props.label}
          gradient={p.gradient}
          onChange={(gradient) => props.onChange({ gradient })}
        />
      )}
    </>
  );
}

/**
 * The preview of the config being designed: the image and the quick check after each short pause in
 * the changes, the full verdict after a longer one.
 */
function usePreview(org: string, config: StyleConfig, brandUlid: string) {
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

function readFileAsDataUri(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read.'));
    reader.readAsDataURL(file);
  });
}

function Designer(props: { org: string; style: QrStyle | null; brands: Brand[]; membership: Membership }) {
  const api = orgApi(props.org);
  const { route } = useLocation();
  const creating = !props.style;
  const [name, setName] = useState(props.style?.name ?? '');
  const [brandUlid, setBrandUlid] = useState(props.style?.brand?.ulid ?? '');
  const [config, setConfig] = useState<StyleConfig>(props.style?.config ?? NEW_CONFIG);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [logoError, setLogoError] = useState('');
  const [busy, setBusy] = useState(false);
  const preview = usePreview(props.org, config, brandUlid);
  const logoInput = useRef<HTMLInputElement>(null);

  /** Merges a patch into one section of the config (undefined values drop keys). */
  function section<K extends keyof StyleConfig>(key: K, patch: Partial<NonNullable<StyleConfig[K]>>) {
    setConfig((c) => ({ ...c, [key]: { ...((c[key] as object | undefined) ?? {}), ...patch } }));
  }
  function setPaint(key: 'dotsOptions' | 'cornersSquareOptions' | 'cornersDotOptions' | 'backgroundOptions') {
    return (p: PaintOptions) =>
      setConfig((c) => {
        const { color: _c, gradient: _g, ...rest } = (c[key] ?? {}) as PaintOptions & { type?: string };
        return { ...c, [key]: { ...rest, ...p } };
      });
  }

  async function pickLogo(e: Event) {
    setLogoError('');
    const file = (e.target as HTMLInputElement).files?.[0];
    if (!file) return;
    if (!['image/png', 'image/jpeg', 'image/svg+xml'].includes(file.type)) {
      setLogoError('The logo must be a PNG, JPEG or SVG image.');
      return;
    }
    if (file.size > LOGO_MAX_BYTES) {
      setLogoError(`The logo is ${Math.ceil(file.size / 1024)} KiB; at most 256 KiB are allowed.`);
      return;
    }
    const image = await readFileAsDataUri(file);
    setConfig((c) => ({ ...c, image, imageOptions: { imageSize: 0.4, hideBackgroundDots: true, ...c.imageOptions } }));
  }
  function removeLogo() {
    setConfig((c) => {
      const { image: _i, imageOptions: _o, ...rest } = c;
      return rest;
    });
    if (logoInput.current) logoInput.current.value = '';
  }

  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const body: Record<string, unknown> = { name: name.trim(), config: clean(config), brand_ulid: brandUlid || null };
      if (creating) {
        const created = await api.post<{ data: QrStyle }>('/v1/qr-styles', body);
        route(`/app/o/${props.org}/styles/${created.data.ulid}?saved=1`);
      } else {
        const updated = await api.patch<{ data: QrStyle }>(`/v1/qr-styles/${props.style!.ulid}`, body);
        setConfig(updated.data.config);
        setNotice(updated.data.scannability?.verdict === 'warn' ? 'Saved, with the warnings shown beside.' : 'Saved.');
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const refusedReasons =
    error instanceof ApiFailure && error.body.code === 'style_not_scannable'
      ? (error.body.reasons ?? error.body.scannability?.reasons ?? [])
      : null;
  const fieldError = (f: string) => (error instanceof ApiFailure ? error.field(f) : undefined);
  const dots = config.dotsOptions ?? {};
  const squares = config.cornersSquareOptions ?? {};
  const cornerDots = config.cornersDotOptions ?? {};
  const image = config.imageOptions ?? {};
  const frame = config.frame ?? {};

  return (
    <div class="split designer">
      <form onSubmit={save} aria-label={creating ? 'New style' : 'Edit style'} noValidate>
        <fieldset>
          <legend>Style</legend>
          <div class="grid">
            <TextField label="Style name" required value={name} onValue={setName} error={fieldError('name')} />
            <SelectField
              label="Brand"
              value={brandUlid}
              onValue={setBrandUlid}
              options={[{ value: '', label: 'None' }, ...props.brands.map((b) => ({ value: b.ulid, label: b.name }))]}
              hint="A brand's style may use its kit: brand:<name> colours and brand:logo."
              error={fieldError('brand_ulid')}
            />
          </div>
        </fieldset>

        <fieldset>
          <legend>Size and error correction</legend>
          <div class="grid">
            <NumberField
              label="Width (px)"
              min={64}
              max={4096}
              value={config.width}
              onValue={(v) => setConfig((c) => ({ ...c, width: v }))}
            />
            <NumberField
              label="Height (px)"
              min={64}
              max={4096}
              value={config.height}
              onValue={(v) => setConfig((c) => ({ ...c, height: v }))}
            />
            <NumberField
              label="Margin (px)"
              min={0}
              max={1024}
              value={config.margin}
              onValue={(v) => setConfig((c) => ({ ...c, margin: v }))}
              hint="The quiet zone at this width; empty: 4 modules."
            />
            <SelectField
              label="Error correction"
              value={config.qrOptions?.errorCorrectionLevel ?? 'M'}
              onValue={(v) => section('qrOptions', { errorCorrectionLevel: v as ErrorCorrectionLevel })}
              options={LEVELS}
              hint="Higher levels tolerate a larger logo and more damage, with more modules."
            />
          </div>
        </fieldset>

        <fieldset>
          <legend>Dots</legend>
          <div class="grid">
            <SelectField
              label="Dot shape"
              value={dots.type ?? 'square'}
              onValue={(v) => section('dotsOptions', { type: v as DotType })}
              options={options(DOT_TYPES)}
            />
          </div>
          <PaintEditor label="Dots" paint={dots} onChange={setPaint('dotsOptions')} />
        </fieldset>

        <fieldset>
          <legend>Corners</legend>
          <div class="grid">
            <SelectField
              label="Corner square shape"
              value={squares.type ?? 'square'}
              onValue={(v) => section('cornersSquareOptions', { type: v as CornerSquareType })}
              options={options(CORNER_SQUARE_TYPES)}
            />
            <SelectField
              label="Corner dot shape"
              value={cornerDots.type ?? 'square'}
              onValue={(v) => section('cornersDotOptions', { type: v as CornerDotType })}
              options={options(CORNER_DOT_TYPES)}
            />
          </div>
          <PaintEditor label="Corner squares" paint={squares} onChange={setPaint('cornersSquareOptions')} />
          <PaintEditor label="Corner dots" paint={cornerDots} onChange={setPaint('cornersDotOptions')} />
        </fieldset>

        <fieldset>
          <legend>Background</legend>
          <PaintEditor
            label="Background"
            paint={config.backgroundOptions ?? {}}
            onChange={setPaint('backgroundOptions')}
            transparent
          />
        </fieldset>

        <fieldset>
          <legend>Logo</legend>
          <div class="field">
            <label for="style-logo">Logo file (PNG, JPEG or SVG, at most 256 KiB)</label>
            <input
              id="style-logo"
              ref={logoInput}
              type="file"
              accept="image/png,image/jpeg,image/svg+xml"
              onChange={pickLogo}
              aria-invalid={logoError ? true : undefined}
              aria-describedby={logoError ? 'style-logo-error' : undefined}
            />
            {logoError && (
              <small id="style-logo-error" class="field-error">
                {logoError}
              </small>
            )}
          </div>
          {brandUlid && config.image !== 'brand:logo' && (
            <button type="button" class="btn small" onClick={() => setConfig((c) => ({ ...c, image: 'brand:logo' }))}>
              Use the brand kit's logo
            </button>
          )}
          {config.image && (
            <>
              <div class="row">
                {config.image.startsWith('data:') ? (
                  <img class="logo-thumb" src={config.image} alt="The logo" width={48} height={48} />
                ) : (
                  <span class="mono">{config.image}</span>
                )}
                <button type="button" class="btn small" onClick={removeLogo}>
                  Remove the logo
                </button>
              </div>
              <div class="grid">
                <NumberField
                  label="Logo size (imageSize: share of the error correction, 0 to 1)"
                  min={0}
                  max={1}
                  value={image.imageSize}
                  onValue={(v) => section('imageOptions', { imageSize: v })}
                />
                <NumberField
                  label="Logo margin (px)"
                  min={0}
                  max={256}
                  value={image.margin}
                  onValue={(v) => section('imageOptions', { margin: v })}
                />
              </div>
              <CheckboxField
                label="Hide the dots behind the logo"
                checked={image.hideBackgroundDots ?? true}
                onChecked={(v) => section('imageOptions', { hideBackgroundDots: v })}
              />
            </>
          )}
        </fieldset>

        <fieldset>
          <legend>Frame</legend>
          <div class="grid">
            <SelectField
              label="Frame"
              value={frame.style ?? 'none'}
              onValue={(v) => section('frame', { style: v as FrameStyle })}
              options={FRAME_STYLES}
            />
            {frame.style && frame.style !== 'none' && (
              <>
                <TextField
                  label="Frame text"
                  value={frame.text ?? ''}
                  onValue={(v) => section('frame', { text: v || undefined })}
                  hint={`Up to ${FRAME_TEXT_MAX} characters, e.g. “Scan me”.`}
                  {...{ maxLength: FRAME_TEXT_MAX }}
                />
                <ColorField label="Frame colour" value={frame.color} onValue={(v) => section('frame', { color: v })} />
                <ColorField
                  label="Frame text colour"
                  value={frame.textColor}
                  onValue={(v) => section('frame', { textColor: v })}
                />
              </>
            )}
          </div>
        </fieldset>

        {!refusedReasons && <ErrorMessage error={error} />}
        {refusedReasons && (
          <div class="message error" role="alert" data-testid="refused-reasons">
            <p>Not saved: the style would not scan reliably.</p>
            <ReasonList reasons={refusedReasons} />
          </div>
        )}
        {notice && <StatusMessage>{notice}</StatusMessage>}
        <div class="row">
          <button type="submit" class="btn primary" disabled={busy}>
            {busy ? 'Saving…' : creating ? 'Create style' : 'Save style'}
          </button>
          <a class="btn" href={`/app/o/${props.org}/styles`}>
            Back to the styles
          </a>
          {!creating && can(props.membership, 'styles.manage') && (
            <ConfirmButton
              label="Delete style"
              danger
              question={`Delete the style ${props.style!.name}? It is no longer offered for codes.`}
              onConfirm={async () => {
                await api.del(`/v1/qr-styles/${props.style!.ulid}`);
                route(`/app/o/${props.org}/styles`);
              }}
            />
          )}
        </div>
      </form>

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
    </div>
  );
}

export default function StyleDesigner(props: { org: string; style?: string; membership: Membership }) {
  const api = orgApi(props.org);
  const { query: q } = useLocation();
  const data = useLoad(async () => {
    const [style, brands] = await Promise.all([
      props.style ? api.get<{ data: QrStyle }>(`/v1/qr-styles/${props.style}`).then((r) => r.data) : null,
      can(props.membership, 'brands.view') ? api.get<Paged<Brand>>('/v1/brands').then((r) => r.data) : ([] as Brand[]),
    ]);
    return { style, brands };
  }, [props.org, props.style]);
  if (data.error) {
    return (
      <Page title="Style not found">
        <ErrorMessage error={data.error} />
        <p>
          <a href={`/app/o/${props.org}/styles`}>Back to the styles</a>
        </p>
      </Page>
    );
  }
  if (!data.data) return <Loading />;
  return (
    <Page title={data.data.style ? `Style: ${data.data.style.name}` : 'New style'}>
      {q.saved && <StatusMessage>Saved.</StatusMessage>}
      <Designer
        key={props.style ?? 'new'}
        org={props.org}
        style={data.data.style}
        brands={data.data.brands}
        membership={props.membership}
      />
    </Page>
  );
}
