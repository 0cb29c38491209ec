import { defineOperation } from '../operations/operation.js';
import type { JsonSchema } from '../schemas/validation.js';
import { dataEnvelope, objectSchema, ulid } from '../schemas/common.js';
import { StylePreview } from '../qr-styles/schema.js';
import { previewCodeImage } from './draft-image.js';
import { CONTENT_TYPES, IMAGE_FORMATS, MARGIN_MAX, SIZE_MAX, SIZE_MIN, type ImageFormat } from '../rendering/index.js';
import { drawCodeImage, resolveCodeImage } from './image.js';
import { codeParams, previewCodeBody, type CodeParams, type PreviewCodeBody } from './schema.js';
import { getCodeRow } from './service.js';

export const codeImageQuery = objectSchema('codes.image.query', {
  format: {
    type: 'string',
    enum: [...IMAGE_FORMATS],
    description: 'svg (default), png or pdf; without it, Accept: image/png or application/pdf chooses.',
  },
  size: {
    type: 'integer',
    minimum: SIZE_MIN,
    maximum: SIZE_MAX,
    description: 'Width in pixels (PNG, SVG; default 1024) or points (PDF; default 288, 4 inches).',
  },
  margin: {
    type: 'integer',
    minimum: 0,
    maximum: MARGIN_MAX,
    description: 'Quiet zone in modules; overrides the style’s margin (default: the style’s, else 4).',
  },
  style_ulid: { ...ulid, description: 'Render with this style of the organization instead of the code’s.' },
  download: { type: 'integer', enum: [0, 1], description: '1: offered as a download named `<slug>.<ext>`.' },
  compressed: {
    type: 'boolean',
    description:
      'true: a gs1 code’s image encodes its GS1 compressed Digital Link URI (GS1 Digital Link: Compression) instead of ' +
      'the uncompressed public_url; 422 for a code of another type. See docs/gs1.md.',
  },
});

export interface CodeImageQuery {
  format?: ImageFormat;
  size?: number;
  margin?: number;
  style_ulid?: string;
  download?: 0 | 1;
  compressed?: boolean;
}

/** The format a request asks for: the query's, else the first image type Accept names, else SVG. */
function negotiateFormat(format: ImageFormat | undefined, accept: string): ImageFormat {
  if (format) return format;
  for (const part of accept.split(',')) {
    const type = part.split(';')[0].trim().toLowerCase();
    if (type === 'image/png') return 'png';
    if (type === 'application/pdf') return 'pdf';
    if (type === 'image/svg+xml') return 'svg';
  }
  return 'svg';
}

/** Whether If-None-Match names this ETag (weak comparison, as RFC 9110 asks for it). */
function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}

const CACHE_CONTROL = 'private, no-cache';
const string: JsonSchema = { type: 'string' };
const cacheHeaders = {
  ETag: {
    description: 'Strong validator of the image: it changes when anything the image depends on changes.',
    schema: string,
  },
  'Cache-Control': { description: '`private, no-cache`: keep it, but revalidate with If-None-Match.', schema: string },
  Vary: { description: '`Accept`: without `format`, Accept chooses the format.', schema: string },
};

// GET /v1/qr-codes/{code_ulid}/image
export const codesImage = defineOperation<CodeParams, CodeImageQuery>({
  id: 'codes.image',
  method: 'GET',
  path: '/v1/qr-codes/{code_ulid}/image',
  summary: 'The QR image of a code, drawn from its style (SVG, PNG or PDF)',
  description:
    'The encoded text is always the code’s public_url. The style is the code’s (or `style_ulid`), with brand-kit ' +
    'references resolved; a code without a style gets black on white. SVG is compact (merged paths); PDF is vector, ' +
    'the page sized to the image. A strong ETag answers If-None-Match with 304. A stored style that does not fit ' +
    'the style schema is 409. Images are drawn by a pool of render threads: when its queue is full the answer is 503 with ' +
    'Retry-After. See docs/rendering.md.',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  params: codeParams,
  query: codeImageQuery,
  response: {
    status: 200,
    description: 'The image.',
    media: {
      'image/svg+xml': { type: 'string', description: 'SVG text.' },
      'image/png': { type: 'string', format: 'binary' },
      'application/pdf': { type: 'string', format: 'binary' },
    },
    headers: {
      ...cacheHeaders,
      'Content-Disposition': {
        description: 'With download=1: `attachment; filename="<slug>.<ext>"`.',
        schema: string,
      },
    },
  },
  alternatives: [
    { status: 304, description: 'Not modified: the If-None-Match ETag is current.', headers: cacheHeaders },
  ],
  errors: [404, 409, 503],
  handler: async ({ app, principal, accept, ifNoneMatch }, { params, query }) => {
    const code = await getCodeRow(app.db, principal.org, params.code_ulid);
    const format = negotiateFormat(query.format, accept);
    const resolved = await resolveCodeImage(app.db, principal.org, code, {
      format,
      size: query.size,
      margin: query.margin,
      styleUlid: query.style_ulid,
      compressed: query.compressed,
    });
    const headers: Record<string, string> = { ETag: resolved.etag, 'Cache-Control': CACHE_CONTROL, Vary: 'Accept' };
    if (etagMatches(ifNoneMatch, resolved.etag)) return { status: 304, headers };
    const image = await drawCodeImage(app, principal.org, resolved);
    if (query.download === 1) headers['Content-Disposition'] = `attachment; filename="${resolved.filename}"`;
    return { status: 200, body: image.body, contentType: CONTENT_TYPES[format], headers };
  },
});

const CodeImagePreview: JsonSchema = {
  $id: 'CodeImagePreview',
  type: 'object',
  required: [...(StylePreview.required as string[]), 'text', 'public_url'],
  properties: {
    ...(StylePreview.properties as Record<string, JsonSchema>),
    text: { type: 'string', description: 'What the symbol encodes: the public URL, or a static type’s payload.' },
    public_url: {
      type: ['string', 'null'],
      description: 'The public URL the code would have; null for a static type.',
    },
  },
};

// POST /v1/qr-codes/preview
export const codesImagePreview = defineOperation<Record<string, never>, Record<string, never>, PreviewCodeBody>({
  id: 'codes.preview',
  method: 'POST',
  path: '/v1/qr-codes/preview',
  summary: 'Draw the QR image of a code before it is created',
  description:
    'For a form that shows the QR code while it is filled in: the text the code would encode (the public URL its ' +
    'slug and domain give, or a static type’s payload), drawn with the style given, and the quick scannability ' +
    'check of that symbol. Nothing is saved and the slug is not reserved (nor checked against existing codes). ' +
    'What the symbol still needs (a slug, a domain, a static type’s destination) is 422 with those fields.',
  tag: 'QR codes',
  ability: 'codes.create',
  billable: true,
  body: previewCodeBody,
  response: { status: 200, description: 'The image and what it encodes.', schema: dataEnvelope(CodeImagePreview) },
  errors: [409, 503],
  handler: async ({ app, principal }, { body }) => ({
    status: 200,
    body: { data: await previewCodeImage(app, principal.org, body) },
  }),
});
