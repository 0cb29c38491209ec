// The logo of a style: a PNG, JPEG or SVG file kept in the style as a data: URI (or the brand
// kit's logo), its size and margin, and whether the dots behind it are hidden.
import { useRef, useState } from 'preact/hooks';
import { NumberField } from './style-fields';
import { CheckboxField } from './ui';
import type { Scannability, StyleConfig } from '../types';
import { readDataUri } from './files';

/** The API's limit on a logo file (the image's maxLength in the OpenAPI document is this in base64). */
const LOGO_MAX_BYTES = 256 * 1024;

export function LogoFieldset(props: {
  config: StyleConfig;
  setConfig: (update: (c: StyleConfig) => StyleConfig) => void;
  brandUlid: string;
  /** The latest verdict of the design (the quick check while it changes), for the logo's share. */
  scannability?: Scannability;
}) {
  const { config, setConfig, brandUlid } = props;
  const [logoError, setLogoError] = useState('');
  const logoInput = useRef<HTMLInputElement>(null);
  const image = config.imageOptions ?? {};
  const section = (patch: Partial<NonNullable<StyleConfig['imageOptions']>>) =>
    setConfig((c) => ({ ...c, imageOptions: { ...c.imageOptions, ...patch } }));

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
    const image = await readDataUri(file);
    setConfig((c) => ({ ...c, image, imageOptions: { imageSize: 0.4, hideBackgroundDots: true, ...c.imageOptions } }));
  }
  function removeLogo() {
    setConfig((c) => {
      const { image: _i, imageOptions: _o, ...rest } = c;
      return rest;
    });
    if (logoInput.current) logoInput.current.value = '';
  }

  return (
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
              onValue={(v) => section({ imageSize: v })}
            />
            <LogoShare scannability={props.scannability} />
            <NumberField
              label="Logo margin (px)"
              min={0}
              max={256}
              value={image.margin}
              onValue={(v) => section({ margin: v })}
            />
          </div>
          <CheckboxField
            label="Hide the dots behind the logo"
            checked={image.hideBackgroundDots ?? true}
            onChecked={(v) => section({ hideBackgroundDots: v })}
          />
        </>
      )}
    </fieldset>
  );
}

const pct = (n: number) => `${Math.round(n * 1000) / 10} %`;

/** What the logo takes of the symbol, as the service measured it on the drawn design. */
function LogoShare(props: { scannability?: Scannability }) {
  const s = props.scannability;
  return (
    <p class="logo-share" data-testid="logo-share" aria-live="polite">
      {s && s.logo_area !== undefined ? (
        <>
          The logo covers <strong>{pct(s.logo_area)}</strong> of the symbol and hides {pct(s.logo_coverage)} of its
          modules; error correction {s.error_correction} restores up to {RESTORES[s.error_correction]}.
        </>
      ) : (
        'The share of the symbol the logo covers is measured with the preview…'
      )}
    </p>
  );
}

/** What each error-correction level can restore. */
const RESTORES: Record<string, string> = { L: '7 %', M: '15 %', Q: '25 %', H: '30 %' };
