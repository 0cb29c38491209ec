// The style designer: every option of a style (qr-code-styling's names plus the frame) with a live
// preview rendered by the service and its scannability verdict as you change it; create, save and
// delete. The service checks every save: a style that fails is refused (422 style_not_scannable)
// and its reasons are shown.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { ApiFailure, orgApi } from '../api';
import { ReasonList } from '../components/scannability';
import { ColorField, NumberField, PaintEditor, Palette, paletteOf } from '../components/style-fields';
import { LogoFieldset } from '../components/style-logo';
import { PresetGallery, withPreset } from '../components/style-presets';
import { ShapePicker } from '../components/style-thumbnails';
import { StylePreview, clean, usePreview } from '../components/style-preview';
import {
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
import {
  enumValues,
  type Brand,
  type Membership,
  type PaintOptions,
  type Paged,
  type QrStyle,
  type StyleConfig,
} from '../types';

type DotType = NonNullable<NonNullable<StyleConfig['dotsOptions']>['type']>;
type CornerSquareType = NonNullable<NonNullable<StyleConfig['cornersSquareOptions']>['type']>;
type CornerDotType = NonNullable<NonNullable<StyleConfig['cornersDotOptions']>['type']>;
type ErrorCorrectionLevel = NonNullable<NonNullable<StyleConfig['qrOptions']>['errorCorrectionLevel']>;
type FrameStyle = NonNullable<NonNullable<StyleConfig['frame']>['style']>;

// The option names are the API's (the generated types check these lists).
const DOT_TYPES = enumValues<DotType>({
  square: true,
  dots: true,
  rounded: true,
  classy: true,
  'classy-rounded': true,
  'extra-rounded': true,
});
const CORNER_SQUARE_TYPES = enumValues<CornerSquareType>({ square: true, dot: true, 'extra-rounded': true });
const CORNER_DOT_TYPES = enumValues<CornerDotType>({ square: true, dot: true });
/** The API's limit on the frame text (its maxLength in the OpenAPI document). */
const FRAME_TEXT_MAX = 32;

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

/** The renderer's frame colours when none is given (server/rendering/geometry.ts). */
const FRAME_COLOR = '#000000';
const frameTextColor = (style: FrameStyle | undefined, color: string | undefined) =>
  style === 'banner' ? '#ffffff' : (color ?? FRAME_COLOR);

function Designer(props: { org: string; style: QrStyle | null; brands: Brand[]; membership: Membership }) {
  const api = orgApi(props.org);
  const { route } = useLocation();
  const creating = !props.style;
  const [name, setName] = useState(props.style?.name ?? '');
  const [brandUlid, setBrandUlid] = useState(props.style?.brand?.ulid ?? '');
  const [config, setConfig] = useState<StyleConfig>(props.style?.config ?? NEW_CONFIG);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState('');
  const [busy, setBusy] = useState(false);
  const preview = usePreview(props.org, config, brandUlid);

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
  const frame = config.frame ?? {};
  const palette = paletteOf(props.brands.find((b) => b.ulid === brandUlid)?.brand_kit);
  /** A frame chosen gets its colours written out, so its colour fields show what is drawn. */
  function setFrameStyle(style: FrameStyle) {
    setConfig((c) => {
      if (style === 'none') {
        const { frame: _f, ...rest } = c;
        return rest;
      }
      const color = c.frame?.color ?? FRAME_COLOR;
      return {
        ...c,
        frame: { ...c.frame, style, color, textColor: c.frame?.textColor ?? frameTextColor(style, color) },
      };
    });
  }

  return (
    <div class="split designer">
      <Palette.Provider value={palette}>
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

          <PresetGallery org={props.org} onApply={(p) => setConfig((c) => withPreset(c, p))} />

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
            <ShapePicker
              org={props.org}
              legend="Dot shape"
              part="dotsOptions"
              values={DOT_TYPES}
              value={dots.type ?? 'square'}
              onValue={(v) => section('dotsOptions', { type: v as DotType })}
            />
            <PaintEditor label="Dots" paint={dots} onChange={setPaint('dotsOptions')} />
          </fieldset>

          <fieldset>
            <legend>Corners</legend>
            <div class="shape-pickers">
              <ShapePicker
                org={props.org}
                legend="Corner square shape"
                part="cornersSquareOptions"
                values={CORNER_SQUARE_TYPES}
                value={squares.type ?? 'square'}
                onValue={(v) => section('cornersSquareOptions', { type: v as CornerSquareType })}
              />
              <ShapePicker
                org={props.org}
                legend="Corner dot shape"
                part="cornersDotOptions"
                values={CORNER_DOT_TYPES}
                value={cornerDots.type ?? 'square'}
                onValue={(v) => section('cornersDotOptions', { type: v as CornerDotType })}
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

          <LogoFieldset
            config={config}
            setConfig={setConfig}
            brandUlid={brandUlid}
            scannability={preview.scannability ?? preview.quick}
          />

          <fieldset>
            <legend>Frame</legend>
            <div class="grid">
              <SelectField
                label="Frame"
                value={frame.style ?? 'none'}
                onValue={(v) => setFrameStyle(v as FrameStyle)}
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
                  <ColorField
                    label="Frame colour"
                    value={frame.color}
                    fallback={FRAME_COLOR}
                    onValue={(v) => section('frame', { color: v || undefined })}
                  />
                  <ColorField
                    label="Frame text colour"
                    value={frame.textColor}
                    fallback={frameTextColor(frame.style, frame.color)}
                    onValue={(v) => section('frame', { textColor: v || undefined })}
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
      </Palette.Provider>

      <StylePreview preview={preview} />
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
