// MCP-only operation behind codes_image: the code's QR image as PNG (tool `image` content) and as
// SVG (text), rendered by the QR-code image service like GET /v1/qr-codes/{code_ulid}/image. Not a
// REST endpoint (REST answers one format per request); it runs through executeOperation like every
// tool: codes.view, one admitted and metered call, as the REST image is.
import { defineOperation } from '../operations/operation.js';
import { renderCodeImage } from './image.js';
import { DEFAULT_SIZE, SIZE_MAX, SIZE_MIN } from '../rendering/index.js';
import { getCodeRow } from './service.js';
import { objectSchema, ulid } from '../schemas/common.js';

export interface CodeImageParams {
  code_ulid: string;
}
export interface CodeImageQuery {
  size: number;
  style_ulid?: string;
}

export interface CodeImagePayload {
  /** base64 of the PNG. */
  png: string;
  svg: string;
}

// MCP tool codes_image
export const codesImageTool = defineOperation<CodeImageParams, CodeImageQuery>({
  id: 'mcp.codes.image',
  method: 'GET',
  path: '/mcp#codes_image',
  summary: 'The QR image of a code as PNG and SVG',
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
      description: `PNG width and height in pixels, ${SIZE_MIN} to ${SIZE_MAX} (default ${DEFAULT_SIZE}); the SVG is drawn at the same width.`,
    },
    style_ulid: { ...ulid, description: 'Render with this style instead of the code’s own.' },
  }),
  response: { status: 200, description: 'The PNG (base64) and the SVG of the code’s QR image.' },
  errors: [404],
  handler: async ({ app, principal }, { params, query }) => {
    const code = await getCodeRow(app.db, principal.org, params.code_ulid);
    const options = { styleUlid: query.style_ulid };
    const png = await renderCodeImage(app.db, principal.org, code, { ...options, format: 'png', size: query.size });
    const svg = await renderCodeImage(app.db, principal.org, code, { ...options, format: 'svg' });
    const body: CodeImagePayload = { png: png.body.toString('base64'), svg: svg.body.toString('utf8') };
    return { status: 200, body };
  },
});
