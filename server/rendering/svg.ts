// The scene as SVG text: one <path> per layer (merged module shapes), gradients in <defs> in the
// scene's own units, the logo as an embedded data: image. Size in pixels from the caller.
import type { Layer, Scene } from './geometry.js';
import { num } from './geometry.js';
import { logoDataUri } from './logo.js';
import { hex6, type Paint } from './paint.js';

function fillOf(paint: Paint, id: string, defs: string[]): string {
  if (paint.kind === 'solid') {
    return `fill="${hex6(paint.color)}"${paint.color.a < 1 ? ` fill-opacity="${num(paint.color.a)}"` : ''}`;
  }
  const stops = paint.stops
    .map(
      (s) =>
        `<stop offset="${num(s.offset)}" stop-color="${hex6(s.color)}"${s.color.a < 1 ? ` stop-opacity="${num(s.color.a)}"` : ''}/>`,
    )
    .join('');
  defs.push(
    paint.kind === 'linear'
      ? `<linearGradient id="${id}" gradientUnits="userSpaceOnUse" x1="${num(paint.x1)}" y1="${num(paint.y1)}" x2="${num(paint.x2)}" y2="${num(paint.y2)}">${stops}</linearGradient>`
      : `<radialGradient id="${id}" gradientUnits="userSpaceOnUse" cx="${num(paint.cx)}" cy="${num(paint.cy)}" r="${num(paint.r)}">${stops}</radialGradient>`,
  );
  return `fill="url(#${id})"`;
}

export function sceneToSvg(scene: Scene, widthPx: number): string {
  const heightPx = (widthPx * scene.height) / scene.width;
  const defs: string[] = [];
  let g = 0;
  const paths = (layers: Layer[]) =>
    layers.map((l) => `<path ${fillOf(l.paint, `g${g++}`, defs)} d="${l.d}"/>`).join('');
  const body = paths(scene.layers);
  let logo = '';
  if (scene.logo) {
    const { x, y, w, h } = scene.logo;
    logo = `<image x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" preserveAspectRatio="xMidYMid meet" href="${logoDataUri(scene.logo.logo)}"/>`;
  }
  const over = paths(scene.overlays);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${num(widthPx)}" height="${num(heightPx)}" ` +
    `viewBox="0 0 ${num(scene.width)} ${num(scene.height)}" shape-rendering="geometricPrecision">` +
    (defs.length ? `<defs>${defs.join('')}</defs>` : '') +
    body +
    logo +
    over +
    '</svg>'
  );
}
