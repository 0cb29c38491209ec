// The one place that turns a stored code into its QR image: the encoded text is the code's
// public_url (the dynamic redirect, never the destination), or for a static type its payload
// (./payload.ts); the style is the style_ulid override
// (looked up in the organization) or the code's own, its brand-kit references resolved from the
// style's brand. Everything a render depends on goes into the strong ETag.
import type { Knex } from 'knex';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { renderEtag, type ImageFormat, type RenderedImage, type RenderRequest } from '../rendering/index.js';
import type { StyleConfig } from '../rendering/style.js';
import { styleConfigErrors } from '../rendering/validate.js';
import { findStyle, resolveStyleConfig } from '../qr-styles/service.js';
import type { CodeRow } from './repository.js';
import { publicUrl } from './service.js';
import { publicSlug } from './slug.js';
import { encodedText } from './payload.js';
import { compressUri } from './gs1-compression.js';
import { canonicalType } from './types.js';

type Db = Knex | Knex.Transaction;

export interface CodeImageOptions {
  format: ImageFormat;
  /** PNG and SVG: pixels; PDF: points. */
  size?: number;
  /** Quiet zone in modules. */
  margin?: number;
  /** Another style of the organization instead of the code's. */
  styleUlid?: string;
  /** A gs1 code's GS1 compressed Digital Link URI instead of its public_url (422 for another type). */
  compressed?: boolean;
}

export interface ResolvedCodeImage {
  request: RenderRequest;
  etag: string;
  /** `<slug>.<ext>`, for downloads. */
  filename: string;
}

/** What a code's image is drawn from: a stored code, or a draft not saved yet (./draft-image.ts). */
export interface ImageSubject {
  type: string;
  destination: unknown;
  /** As stored: `<org-slug>/<slug>`. */
  slug: string;
  domain: { type: string; host: string; origin: string | null };
  /** The code's style, or null for the default. */
  styleUlid: string | null;
}

/** The code's public_url and the text its symbol encodes (the public_url, or a static type's payload). */
export function encodedTextOf(subject: ImageSubject): { publicUrl: string; text: string } {
  const url = publicUrl(subject.domain, subject.slug, subject.type, subject.destination);
  return { publicUrl: url, text: encodedText(canonicalType(subject.type), subject.destination, url) };
}

/** The render request of a code and its ETag, without rendering (a 304 needs no image). */
export async function resolveCodeImage(
  db: Db,
  org: OrgRecord,
  code: CodeRow,
  options: CodeImageOptions,
): Promise<ResolvedCodeImage> {
  const subject: ImageSubject = {
    type: code.type,
    destination: code.destination,
    slug: code.slug,
    domain: { type: code.domain_type, host: code.domain_host, origin: code.domain_origin },
    styleUlid: code.style_ulid,
  };
  const request = await resolveImageRequest(db, org, subject, options);
  return { request, etag: renderEtag(request), filename: `${publicSlug(code.slug)}.${options.format}` };
}

/** The render request of a code or a draft: its encoded text and its style (or the override), resolved. */
export async function resolveImageRequest(
  db: Db,
  org: OrgRecord,
  subject: ImageSubject,
  options: CodeImageOptions,
): Promise<RenderRequest> {
  let config: StyleConfig = {};
  let styleBrandId: number | null = null;
  let styleUlid: string | null = null;
  if (options.styleUlid) {
    const style = await findStyle(db, org, options.styleUlid);
    if (!style) throw ApiError.field('style_ulid', 'No such style in this organization.');
    ({ config, brand_id: styleBrandId, ulid: styleUlid } = { ...style, config: style.config as StyleConfig });
  } else if (subject.styleUlid) {
    const style = await findStyle(db, org, subject.styleUlid);
    if (style)
      ({ config, brand_id: styleBrandId, ulid: styleUlid } = { ...style, config: style.config as StyleConfig });
  }
  if (styleUlid && styleConfigErrors(config)) {
    throw ApiError.conflict(
      `The style ${styleUlid} holds a config that does not fit the style schema; correct it with PATCH /v1/qr-styles/${styleUlid} (qrctl styles-check lists such styles).`,
    );
  }
  if (options.compressed && subject.type !== 'gs1')
    throw ApiError.field('compressed', `Only a gs1 code has a compressed form; this code is of type ${subject.type}.`);
  config = await resolveStyleConfig(db, org, config, styleBrandId);
  const { publicUrl: url, text } = encodedTextOf(subject);
  return {
    text: options.compressed ? compressUri(url) : text,
    config,
    format: options.format,
    size: options.size,
    margin: options.margin,
  };
}

/**
 * A code's QR image with its ETag, drawn by the render threads (or taken from their cache, where
 * images are kept by organization and ETag). `background` (print runs): wait for room in the render
 * queue instead of failing with 503 when it is full.
 */
export async function renderCodeImage(
  app: AppContext,
  org: OrgRecord,
  code: CodeRow,
  options: CodeImageOptions,
  background = false,
): Promise<RenderedImage & { etag: string }> {
  const resolved = await resolveCodeImage(app.db, org, code, options);
  return { ...(await drawCodeImage(app, org, resolved, background)), etag: resolved.etag };
}

/** The image of a resolved request, from the render cache of the organization when drawn before. */
export function drawCodeImage(
  app: AppContext,
  org: OrgRecord,
  resolved: ResolvedCodeImage,
  background = false,
): Promise<RenderedImage> {
  return app.renders.render(resolved.request, { cacheKey: `${org.id}:${resolved.etag}`, background });
}
