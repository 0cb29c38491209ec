import { EXPORT_CODES_CEILING } from '../config.js';
// JSON Schemas of print runs (exports of QR code images as one ZIP).
import { IMAGE_FORMATS, SIZE_MAX, SIZE_MIN, type ImageFormat } from '../rendering/index.js';
import { dateTime, nullableDateTime, objectSchema, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

const EXPORT_FORMATS = IMAGE_FORMATS;
export type ExportFormat = ImageFormat;

const EXPORT_STATUSES = ['queued', 'processing', 'completed', 'failed', 'expired'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

const SELECTION_KINDS = ['codes', 'brand', 'bulk_import'] as const;
export type SelectionKind = (typeof SELECTION_KINDS)[number];

export const createExportBody: JsonSchema = {
  ...objectSchema('codes.exports.create.body', {
    code_ulids: {
      type: 'array',
      minItems: 1,
      maxItems: EXPORT_CODES_CEILING,
      items: ulid,
      description: `The codes to export, in file order (at most QR_EXPORT_MAX_CODES, default 10000, fewer for PNGs above 1024 px; an installation may allow up to ${EXPORT_CODES_CEILING}).`,
    },
    brand_ulid: { ...ulid, description: 'Every live code of this brand.' },
    bulk_import_ulid: { ...ulid, description: 'Every code a finished bulk import created.' },
    format: { type: 'string', enum: [...EXPORT_FORMATS], default: 'svg', description: 'svg (default), png or pdf.' },
    size: {
      type: 'integer',
      minimum: SIZE_MIN,
      maximum: SIZE_MAX,
      description: `As in GET /v1/qr-codes/{code_ulid}/image: width in pixels (PNG, SVG; default 1024) or points (PDF; default 288), ${SIZE_MIN} to ${SIZE_MAX}.`,
    },
    style_ulid: { ...ulid, description: 'Render every code with this style instead of its own.' },
    gs1_compressed: {
      type: 'boolean',
      default: false,
      description:
        'true: the run’s gs1 codes encode their GS1 compressed Digital Link URI (docs/gs1.md); its other codes are drawn as usual.',
    },
  }),
  description: 'Exactly one of code_ulids, brand_ulid and bulk_import_ulid selects the codes.',
};

export interface CreateExportInput {
  code_ulids?: string[];
  brand_ulid?: string;
  bulk_import_ulid?: string;
  format?: ExportFormat;
  size?: number;
  style_ulid?: string;
  gs1_compressed?: boolean;
}

export const exportParams = objectSchema('codes.exports.params', { export_ulid: ulid }, ['export_ulid']);
export interface ExportParams {
  export_ulid: string;
}

export const QrCodeExport: JsonSchema = {
  $id: 'QrCodeExport',
  type: 'object',
  required: ['ulid', 'status', 'format', 'total', 'done', 'progress_percent'],
  properties: {
    ulid: { type: 'string' },
    status: {
      type: 'string',
      enum: [...EXPORT_STATUSES],
      description:
        'queued → processing → completed | failed; a completed export becomes expired when its ZIP is removed.',
    },
    source: { type: ['string', 'null'], description: 'api, or web (the dashboard).' },
    format: { type: 'string', enum: [...EXPORT_FORMATS] },
    size: { type: ['integer', 'null'], description: 'The size asked for; null: the image’s default.' },
    gs1_compressed: {
      type: 'boolean',
      description: 'Whether the run’s gs1 codes encode their compressed Digital Link URI.',
    },
    style: {
      type: ['object', 'null'],
      required: ['ulid', 'name'],
      properties: { ulid: { type: 'string' }, name: { type: 'string' } },
      description: 'The style every code is rendered with; null: each code’s own style.',
    },
    selection: {
      type: 'object',
      required: ['kind', 'ulid'],
      properties: {
        kind: { type: 'string', enum: [...SELECTION_KINDS] },
        ulid: { type: ['string', 'null'], description: 'The brand or bulk import; null for a list of codes.' },
      },
    },
    total: { type: 'integer', description: 'Codes in the export, fixed when it was requested.' },
    done: { type: 'integer', description: 'Codes rendered into the ZIP so far.' },
    progress_percent: { type: 'integer', minimum: 0, maximum: 100 },
    file_name: { type: 'string', description: 'The ZIP’s name in Content-Disposition.' },
    bytes: { type: ['integer', 'null'], description: 'Size of the ZIP once completed.' },
    download_url: {
      type: ['string', 'null'],
      description: 'Path of the download while the ZIP is kept (completed, not expired).',
    },
    error_message: { type: ['string', 'null'] },
    expires_at: { ...nullableDateTime, description: 'When the ZIP is removed (QR_EXPORT_TTL_HOURS after completion).' },
    completed_at: nullableDateTime,
    created_at: dateTime,
    updated_at: dateTime,
  },
};
