// The scene as a vector PDF with pdfkit: one page sized to the image, each layer's path data drawn
// as vector paths (pdfkit reads SVG path data), gradients as PDF shadings. PNG and JPEG logos are
// embedded as they are; an SVG logo is embedded as a 4x raster of its box (pdfkit draws no SVG).
import PDFDocument from 'pdfkit';
import type { Layer, Scene } from './geometry.js';
import { hex6, type Paint } from './paint.js';
import { sceneToCanvas } from './raster.js';

/** Fixed, so the same inputs give the same bytes (the ETag is strong). */
const EPOCH = new Date('2026-01-01T00:00:00Z');

function fill(doc: PDFKit.PDFDocument, paint: Paint): void {
  if (paint.kind === 'solid') {
    doc.fill(hex6(paint.color) as PDFKit.Mixins.ColorValue, 'non-zero');
    return;
  }
  const g =
    paint.kind === 'linear'
      ? doc.linearGradient(paint.x1, paint.y1, paint.x2, paint.y2)
      : doc.radialGradient(paint.cx, paint.cy, 0, paint.cx, paint.cy, paint.r);
  for (const s of paint.stops) g.stop(s.offset, hex6(s.color), s.color.a);
  doc.fill(g, 'non-zero');
}

function drawLayers(doc: PDFKit.PDFDocument, layers: Layer[]): void {
  for (const l of layers) {
    if (l.paint.kind === 'solid') doc.fillOpacity(l.paint.color.a);
    else doc.fillOpacity(1);
    doc.path(l.d);
    fill(doc, l.paint);
  }
}

/** A one-page PDF `widthPt` points wide. */
export async function sceneToPdf(scene: Scene, widthPt: number): Promise<Buffer> {
  const k = widthPt / scene.width;
  const doc = new PDFDocument({
    size: [widthPt, scene.height * k],
    margin: 0,
    compress: true,
    info: { Title: 'QR code', Producer: 'qr-service', Creator: 'qr-service', CreationDate: EPOCH, ModDate: EPOCH },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  doc.save();
  doc.scale(k);
  drawLayers(doc, scene.layers);
  if (scene.logo) {
    const { x, y, w, h, logo } = scene.logo;
    let data = logo.data;
    if (logo.mime === 'image/svg+xml') {
      const only: Scene = {
        ...scene,
        width: w,
        height: h,
        layers: [],
        overlays: [],
        logo: { ...scene.logo, x: 0, y: 0 },
      };
      data = await (await sceneToCanvas(only, Math.max(16, Math.round(w * k * 4)))).encode('png');
    }
    doc.fillOpacity(1);
    doc.image(data, x, y, { width: w, height: h });
  }
  drawLayers(doc, scene.overlays);
  doc.restore();
  doc.end();
  return done;
}
