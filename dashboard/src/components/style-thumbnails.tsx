// Small pictures of the style designer's choices, drawn by the service itself (POST
// /v1/qr-styles/preview, the same renderer as every download), so a thumbnail is exactly what the
// choice draws: the shapes (dots, corner squares, corner dots) as a crop of a real symbol, and the
// presets as whole symbols. Each picture is asked for once per organization and page load, one at
// a time, so the render queue keeps its room for the design being previewed.
import { useEffect, useId, useState } from 'preact/hooks';
import { orgApi } from '../api';
import type { StyleConfig } from '../types';

/** The text of the shape thumbnails: a version 1 symbol (21 modules), the same for every shape. */
const THUMB_TEXT = 'QR';

export interface ThumbRequest {
  config: StyleConfig;
  /** The part of the symbol to show, in modules (the SVG's viewBox), or the whole symbol. */
  crop?: [number, number, number, number];
  size?: number;
}

/** The first thumbnail waits this long, so the preview of the design is drawn first. */
const FIRST_THUMB_DELAY_MS = 1500;

const cache = new Map<string, Promise<string>>();
let queue: Promise<unknown> | null = null;

/** The SVG of a thumbnail as a data: URI, from the cache or drawn after the ones asked before it. */
function thumbnail(org: string, req: ThumbRequest): Promise<string> {
  const key = JSON.stringify([org, req]);
  let found = cache.get(key);
  if (!found) {
    queue ??= new Promise((resolve) => setTimeout(resolve, FIRST_THUMB_DELAY_MS));
    const run = queue.then(async () => {
      const r = await orgApi(org).post<{ data: { image: string } }>('/v1/qr-styles/preview', {
        config: req.config,
        format: 'svg',
        size: req.size ?? 64,
        text: THUMB_TEXT,
        check: 'quick',
      });
      let svg = r.data.image;
      if (req.crop) svg = svg.replace(/viewBox="[^"]*"/, `viewBox="${req.crop.join(' ')}"`);
      return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    });
    found = run;
    // A failed thumbnail is asked for again next time; the queue goes on either way.
    run.catch(() => cache.delete(key));
    queue = run.catch(() => undefined);
    cache.set(key, found);
  }
  return found;
}

export function Thumbnail(props: { org: string; request: ThumbRequest; size?: number }) {
  const [src, setSrc] = useState<string | null>(null);
  const key = JSON.stringify(props.request);
  useEffect(() => {
    let live = true;
    thumbnail(props.org, props.request).then(
      (s) => live && setSrc(s),
      () => live && setSrc(null),
    );
    return () => {
      live = false;
    };
  }, [props.org, key]);
  const size = props.size ?? 48;
  return src ? (
    <img src={src} alt="" width={size} height={size} class="thumb" />
  ) : (
    <span class="thumb placeholder" style={{ width: `${size}px`, height: `${size}px` }} />
  );
}

/** Light grey: the part of a corner thumbnail that is not the choice. */
const MUTED = '#c4c8cf';
/** A symbol without quiet zone, so the crop's units are modules from the symbol's edge. */
const BASE: StyleConfig = { width: 210, height: 210, margin: 0 };

/** Which part of the style a shape picker sets, and how its thumbnails show one choice. */
export const SHAPE_THUMBS = {
  dotsOptions: (type: string): ThumbRequest => ({
    config: { ...BASE, dotsOptions: { type: type as never, color: '#000000' } },
    // Data modules below and right of the top-left finder pattern.
    crop: [8, 8, 9, 9],
  }),
  cornersSquareOptions: (type: string): ThumbRequest => ({
    config: {
      ...BASE,
      dotsOptions: { color: MUTED },
      cornersSquareOptions: { type: type as never, color: '#000000' },
      cornersDotOptions: { type: 'square', color: MUTED },
    },
    crop: [-0.5, -0.5, 8, 8],
  }),
  cornersDotOptions: (type: string): ThumbRequest => ({
    config: {
      ...BASE,
      dotsOptions: { color: MUTED },
      cornersSquareOptions: { type: 'square', color: MUTED },
      cornersDotOptions: { type: type as never, color: '#000000' },
    },
    crop: [-0.5, -0.5, 8, 8],
  }),
} as const;

/**
 * One shape among several, chosen from their thumbnails: a radio group (native radios, so the
 * arrow keys move through it and a screen reader names the group and each choice).
 */
export function ShapePicker(props: {
  org: string;
  legend: string;
  part: keyof typeof SHAPE_THUMBS;
  values: readonly string[];
  value: string;
  onValue: (v: string) => void;
}) {
  const name = `shape-${useId()}`;
  return (
    <fieldset class="shape-picker">
      <legend>{props.legend}</legend>
      <div class="choices">
        {props.values.map((v) => (
          <label key={v} class={`choice${v === props.value ? ' chosen' : ''}`}>
            <input type="radio" name={name} value={v} checked={v === props.value} onChange={() => props.onValue(v)} />
            <Thumbnail org={props.org} request={SHAPE_THUMBS[props.part](v)} />
            <span>{v}</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
