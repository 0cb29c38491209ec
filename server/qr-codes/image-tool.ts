// MCP-only operation behind codes_image: the code's QR image in the requested format (PNG or SVG)
// and size, as MCP image content, rendered by the QR-code image service like
// GET /v1/qr-codes/{code_ulid}/image. Not a REST endpoint (its body carries the image as base64);
// it runs through executeOperation like every tool: codes.view, one admitted and metered call, as
// the REST image is.
import { defineOperation } from '../operations/operation.js';
import { renderCodeImage } from './image.js';
import { DEFAULT_SIZE, SIZE_MAX, SIZE_MIN } from '../rendering/index.js';
import { getCodeRow } from './service.js';
import { objectSchema, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

const CODE_IMAGE_FORMATS = { png: 'image/png', svg: 'image/svg+xml' } as const;
type CodeImageFormat = keyof typeof CODE_IMAGE_FORMATS;

export interface CodeImageParams {
  code_ulid: string;
}
export interface CodeImageQuery {
  size: number;
  format: CodeImageFormat;
  style_ulid?: string;
  compressed?: boolean;
}

/** The operation's body: what the image is, and the image itself as base64 (`data`). */
export interface CodeImagePayload {
  code_ulid: string;
  format: CodeImageFormat;
  mime_type: string;
  /** Width and height in pixels. */
  size: number;
  etag: string;
  data: string;
}

/** The tool's structuredContent: the payload without the image bytes, which are the image content. */
export const codeImageDescription: JsonSchema = {
  type: 'object',
  required: ['code_ulid', 'format', 'mime_type', 'size', 'etag'],
  additionalProperties: false,
  properties: {
    code_ulid: ulid,
    format: { type: 'string', enum: Object.keys(CODE_IMAGE_FORMATS) },
    mime_type: { type: 'string', enum: Object.values(CODE_IMAGE_FORMATS) },
    size: { type: 'integer', description: 'Width and height of the image in pixels.' },
    etag: { type: 'string', description: 'The ETag GET /v1/qr-codes/{code_ulid}/image gives the same image.' },
  },
};

// MCP tool codes_image
export const codesImageTool = defineOperation<CodeImageParams, CodeImageQuery>({
  id: 'mcp.codes.image',
  method: 'GET',
  path: '/mcp#codes_image',
  summary: 'The QR image of a code as PNG or SVG',
  tag: 'MCP',
  ability: 'codes.view',
  billable: true,
  params: objectSchema('mcp.codes.image.params', { code_ulid: ulid }, ['code_ulid']),
  query: objectSchema('mcp.codes.image.query', {
    size: {
      type: 'integer',
      minimum: SIZE_MIN,
      maximum: SIZE_MAX,
      default: DEFAULT_SIZE,
      description: `Width and height in pixels, ${SIZE_MIN} to ${SIZE_MAX} (default ${DEFAULT_SIZE}).`,
    },
    format: {
      type: 'string',
      enum: Object.keys(CODE_IMAGE_FORMATS),
      default: 'png',
      description: 'png (default) or svg.',
    },
    style_ulid: { ...ulid, description: 'Render with this style instead of the code’s own.' },
    compressed: {
      type: 'boolean',
      description:
        'true: a gs1 code’s GS1 compressed Digital Link URI instead of its public_url (422 for other types).',
    },
  }),
  response: { status: 200, description: 'The image (base64) and what it is.' },
  errors: [404, 503],
  handler: async ({ app, principal }, { params, query }) => {
    const code = await getCodeRow(app.db, principal.org, params.code_ulid);
    const image = await renderCodeImage(app, principal.org, code, {
      styleUlid: query.style_ulid,
      format: query.format,
      size: query.size,
      compressed: query.compressed,
    });
    const body: CodeImagePayload = {
      code_ulid: params.code_ulid,
      format: query.format,
      mime_type: CODE_IMAGE_FORMATS[query.format],
      size: query.size,
      etag: image.etag,
      data: image.body.toString('base64'),
    };
    return { status: 200, body };
  },
});
