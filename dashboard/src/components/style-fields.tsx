// The fields of the style designer: colours typed or picked, numbers typed freely, and paints
// (a colour, a linear or radial gradient, or transparent).
import { createContext } from 'preact';
import { useContext, useEffect, useId, useState } from 'preact/hooks';
import { SelectField, TextField } from './ui';
import type { Gradient, PaintOptions } from '../types';

const num = (v: string): number | undefined => (v.trim() === '' || !Number.isFinite(Number(v)) ? undefined : Number(v));
const str = (n: number | undefined): string => (n === undefined ? '' : String(n));

/** #rgb or #rrggbb as #rrggbb for the colour picker; anything else (alpha, transparent) has no swatch. */
function pickerValue(color: string | undefined): string | null {
  if (!color) return null;
  if (/^#[0-9a-f]{6}$/i.test(color)) return color.toLowerCase();
  const m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(color);
  return m ? `#${m[1]}${m[1]}${m[2]}${m[2]}${m[3]}${m[3]}`.toLowerCase() : null;
}

/** A colour offered beside every colour field: `value` is what is stored, `color` what it looks like. */
export interface Swatch {
  name: string;
  value: string;
  color: string;
}

/** Colours every design may start from, after the brand kit's. */
const COMMON_SWATCHES: Swatch[] = [
  { name: 'Black', value: '#000000', color: '#000000' },
  { name: 'White', value: '#ffffff', color: '#ffffff' },
  { name: 'Slate', value: '#1f2937', color: '#1f2937' },
  { name: 'Navy', value: '#1e3a8a', color: '#1e3a8a' },
  { name: 'Forest', value: '#14532d', color: '#14532d' },
  { name: 'Burgundy', value: '#7f1d1d', color: '#7f1d1d' },
  { name: 'Purple', value: '#4c1d95', color: '#4c1d95' },
];

/**
 * The brand kit's colours (brand_kit.colors, each `brand:<name>` so the style follows the kit), then
 * the common ones; the colour fields of the designer offer these.
 */
export function paletteOf(kit: unknown): Swatch[] {
  const colors = (kit && typeof kit === 'object' ? (kit as { colors?: unknown }).colors : null) ?? {};
  const brand = Object.entries(colors as Record<string, unknown>)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && pickerValue(e[1]) !== null)
    .map(([name, color]) => ({ name: `Brand ${name}`, value: `brand:${name}`, color: pickerValue(color)! }));
  return [...brand, ...COMMON_SWATCHES.filter((c) => !brand.some((b) => b.color === c.color))];
}

export const Palette = createContext<Swatch[]>(COMMON_SWATCHES);

/**
 * A colour as text (#rrggbb, #rgb, #rrggbbaa or brand:<name>) with a picker beside it and the
 * palette's swatches (the brand kit's first) below. Empty, it shows the colour the renderer uses
 * instead (`fallback`); a brand colour shows the kit's colour.
 */
export function ColorField(props: {
  label: string;
  value: string | undefined;
  onValue: (v: string) => void;
  hint?: string;
  /** The colour drawn when the field is empty. */
  fallback?: string;
}) {
  const id = useId();
  const palette = useContext(Palette);
  const shown = props.value || props.fallback;
  const swatch = pickerValue(palette.find((p) => p.value === shown)?.color ?? shown);
  const hint = [props.hint, !props.value && props.fallback ? `Empty: ${props.fallback}.` : '']
    .filter(Boolean)
    .join(' ');
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
          placeholder={props.fallback}
          spellcheck={false}
          onInput={(e) => props.onValue((e.target as HTMLInputElement).value.trim())}
          aria-describedby={hint ? `${id}-hint` : undefined}
        />
      </div>
      <div class="swatches" role="group" aria-label={`${props.label}: palette`}>
        {palette.map((p) => (
          <button
            key={p.value}
            type="button"
            class="swatch"
            style={{ background: p.color }}
            title={`${p.name} (${p.color})`}
            aria-label={`${p.name} (${p.color})`}
            aria-pressed={p.value === props.value}
            onClick={() => props.onValue(p.value)}
          />
        ))}
      </div>
      {hint && (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

/**
 * A number typed freely: the text is kept as typed ("0." on the way to "0.5") and the number it
 * reads as is reported; undefined when empty or not a number.
 */
export function NumberField(props: {
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
export function PaintEditor(props: {
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
