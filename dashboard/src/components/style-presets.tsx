// Ready designs to start from: shapes, colours and frame of a good-looking style that scans well
// (test/browser/qr-design.test.ts applies each one and waits for the service's full verdict:
// pass). Applying one keeps the size, margin, error correction and logo of the design.
import { Thumbnail } from './style-thumbnails';
import type { StyleConfig } from '../types';

type PresetPart = Pick<
  StyleConfig,
  'dotsOptions' | 'cornersSquareOptions' | 'cornersDotOptions' | 'backgroundOptions' | 'frame'
>;

const STYLE_PRESETS: { name: string; config: PresetPart }[] = [
  {
    name: 'Classic',
    config: {
      dotsOptions: { type: 'square', color: '#000000' },
      cornersSquareOptions: { type: 'square', color: '#000000' },
      cornersDotOptions: { type: 'square', color: '#000000' },
      backgroundOptions: { color: '#ffffff' },
    },
  },
  {
    name: 'Rounded navy',
    config: {
      dotsOptions: { type: 'rounded', color: '#1e3a8a' },
      cornersSquareOptions: { type: 'extra-rounded', color: '#1e3a8a' },
      cornersDotOptions: { type: 'dot', color: '#1e3a8a' },
      backgroundOptions: { color: '#ffffff' },
    },
  },
  {
    name: 'Classy teal',
    config: {
      dotsOptions: { type: 'classy', color: '#134e4a' },
      cornersSquareOptions: { type: 'extra-rounded', color: '#134e4a' },
      cornersDotOptions: { type: 'square', color: '#134e4a' },
      backgroundOptions: { color: '#ffffff' },
    },
  },
  {
    name: 'Violet gradient',
    config: {
      dotsOptions: {
        type: 'classy-rounded',
        gradient: {
          type: 'linear',
          rotation: Math.PI / 4,
          colorStops: [
            { offset: 0, color: '#6d28d9' },
            { offset: 1, color: '#1e3a8a' },
          ],
        },
      },
      cornersSquareOptions: { type: 'extra-rounded', color: '#4c1d95' },
      cornersDotOptions: { type: 'dot', color: '#1e3a8a' },
      backgroundOptions: { color: '#ffffff' },
    },
  },
  {
    name: 'Burgundy on cream',
    config: {
      dotsOptions: { type: 'extra-rounded', color: '#7f1d1d' },
      cornersSquareOptions: { type: 'extra-rounded', color: '#7f1d1d' },
      cornersDotOptions: { type: 'square', color: '#7f1d1d' },
      backgroundOptions: { color: '#fff7ed' },
    },
  },
  {
    name: 'Forest banner',
    config: {
      dotsOptions: { type: 'rounded', color: '#14532d' },
      cornersSquareOptions: { type: 'extra-rounded', color: '#14532d' },
      cornersDotOptions: { type: 'dot', color: '#14532d' },
      backgroundOptions: { color: '#ffffff' },
      frame: { style: 'banner', text: 'Scan me', color: '#14532d', textColor: '#ffffff' },
    },
  },
];

/** The design with a preset's shapes, colours and frame (a preset without a frame removes it). */
export function withPreset(config: StyleConfig, preset: PresetPart): StyleConfig {
  const { frame: _frame, ...rest } = config;
  return { ...rest, ...preset };
}

export function PresetGallery(props: { org: string; onApply: (preset: PresetPart) => void }) {
  return (
    <fieldset class="presets">
      <legend>Start from a preset</legend>
      <ul class="choices" aria-label="Presets">
        {STYLE_PRESETS.map((p) => (
          <li key={p.name}>
            <button type="button" class="choice" onClick={() => props.onApply(p.config)}>
              <Thumbnail org={props.org} request={{ config: p.config, size: 96 }} size={64} />
              <span>{p.name}</span>
            </button>
          </li>
        ))}
      </ul>
      <p class="hint">A preset sets the shapes, colours and frame; size, margin, error correction and logo stay.</p>
    </fieldset>
  );
}
