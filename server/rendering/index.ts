// The rendering engine: a text and a style config in, an SVG, PNG or PDF out. Pure and offline: no
// database, no network (logos are data: URIs). Callers that render a stored code go through
// renderCodeImage (server/qr-codes/image.ts), which resolves the code's style and brand kit.
import { createHash } from 'node:crypto';
import { buildScene, qrMatrix, type Scene } from './geometry.js';
import { ApiError } from '../errors.js';
import { LRUCache } from 'mnemonist';
import { parseLogo, type Logo } from './logo.js';
import { sceneToPdf } from './pdf.js';
import { sceneToPng } from './raster.js';
import type { StyleConfig } from './style.js';
import { sceneToSvg } from './svg.js';

export type { StyleConfig } from './style.js';

export type ImageFormat = 'svg' | 'png' | 'pdf';
export const IMAGE_FORMATS: readonly ImageFormat[] = ['svg', 'png', 'pdf'];

export interface RenderRequest {
  text: string;
  config: StyleConfig;
  format: ImageFormat;
  /** SVG and PNG: width in pixels; PDF: width in points. Default 1024 (PNG, SVG), 288 (PDF, 4 inches). */
  size?: number;
  /** Quiet zone in modules; overrides the config's margin. */
  margin?: number;
}

export interface RenderedImage {
  body: Buffer;
  contentType: string;
  extension: ImageFormat;
}

export const CONTENT_TYPES: Record<ImageFormat, string> = {
  svg: 'image/svg+xml',
  png: 'image/png',
  pdf: 'application/pdf',
};

export const SIZE_MIN = 64;
export const SIZE_MAX = 4096;
export const DEFAULT_SIZE = 1024;
const DEFAULT_PDF_SIZE = 288;
export const MARGIN_MAX = 32;

/**
 * Bumped whenever the drawing changes, so ETags (which hash the inputs, not the bytes) change with
 * the output.
 */
const RENDERER_VERSION = '2';

// A style's logo is drawn again for every code that uses it: parsed (and sanitised) once.
const logos = new LRUCache<string, Logo>(64);

function logoOf(uri: string): Logo {
  let logo = logos.get(uri);
  if (!logo) {
    logo = parseLogo(uri);
    logos.set(uri, logo);
  }
  return logo;
}

/** The scene of a request: matrix, shapes, logo and frame, in module units. */
export function sceneOf(req: Pick<RenderRequest, 'text' | 'config' | 'margin'>): Scene {
  const logo = req.config.image ? logoOf(req.config.image) : undefined;
  return buildScene({ text: req.text, config: req.config, margin: req.margin, logo });
}

/** Why a text cannot be drawn at an error-correction level (too long for any QR symbol), or null. */
export function payloadProblem(text: string, level: string): string | null {
  try {
    qrMatrix(text, level);
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'payload_too_long') return err.message;
    throw err;
  }
}

export async function renderQr(req: RenderRequest): Promise<RenderedImage> {
  const scene = sceneOf(req);
  const size = req.size ?? (req.format === 'pdf' ? DEFAULT_PDF_SIZE : DEFAULT_SIZE);
  let body: Buffer;
  if (req.format === 'svg') body = Buffer.from(sceneToSvg(scene, size), 'utf8');
  else if (req.format === 'png') body = await sceneToPng(scene, size);
  else body = await sceneToPdf(scene, size);
  return { body, contentType: CONTENT_TYPES[req.format], extension: req.format };
}

/** A strong ETag of everything a render depends on (same inputs, same bytes). */
export function renderEtag(req: RenderRequest): string {
  const h = createHash('sha256')
    .update(JSON.stringify([RENDERER_VERSION, req.text, req.config, req.format, req.size ?? null, req.margin ?? null]))
    .digest('base64url');
  return `"${h.slice(0, 32)}"`;
}
