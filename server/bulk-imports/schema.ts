// JSON Schemas of bulk imports. A row's keys and their JSON types are checked on the request (422
// for the whole request); what a row says (slug syntax, URL, references, duplicates) is checked
// row by row at staging and reported in preview_errors, so one bad row does not hide the others.
import { BULK_IMPORT_ROWS_CEILING } from '../config.js';
import { dateTime, nullableDateTime, objectSchema, ulid } from '../schemas/common.js';
import { MAX_URL_LENGTH } from '../schemas/http-url.js';
import type { JsonSchema } from '../schemas/validation.js';
import { MAX_CUSTOM_JS_BYTES } from '../qr-codes/custom-js.js';

/**
 * A row's strings are bounded loosely, above the rules checked per row (slug 64, URL 2048, name
 * 255): a value a little too long is reported on its row like any other mistake; only a value
 * far beyond any rule refuses the whole request.
 */
const ROW_STRING = 2 * MAX_URL_LENGTH;
/** A CSV file's bound in the schema; BODY_LIMIT_BYTES (5 MiB by default) refuses a larger body before. */
const MAX_CSV_LENGTH = 64 * 1024 * 1024;
const rowString = (description?: string): JsonSchema => ({
  type: 'string',
  maxLength: ROW_STRING,
  ...(description ? { description } : {}),
});
const rowNullableString = (description?: string): JsonSchema => ({
  ...rowString(description),
  type: ['string', 'null'],
});

const BulkImportRow: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'One code to create. slug and destination are required per row; errors are reported per row in preview_errors.',
  properties: {
    slug: rowString('1 to 64 of [A-Za-z0-9_-].'),
    destination: {
      type: ['string', 'object'],
      maxLength: ROW_STRING,
      description: 'An http(s) URL or {url} for type url; the destination object of the row’s type otherwise.',
    },
    type: rowString(
      'url (default; redirect is its alias), vcard, links, app, event, wifi, text, email, sms, phone or geo.',
    ),
    landing_config: { type: ['object', 'null'], description: 'The landing page of a vcard, links, app or event row.' },
    name: rowNullableString(),
    domain_ulid: rowString('Defaults to defaults.domain_ulid.'),
    brand_ulid: rowNullableString('Defaults to defaults.brand_ulid.'),
    style_ulid: rowNullableString(),
    status: rowString('active (default), paused or archived.'),
    custom_js: {
      ...rowNullableString(
        'Enterprise plan: the code’s own script, at most 10240 bytes of UTF-8, only on a verified custom domain (docs/pixels.md).',
      ),
      maxLength: 2 * MAX_CUSTOM_JS_BYTES,
    },
  },
};

export const stageImportBody = objectSchema(
  'codes.bulk.create.body',
  {
    rows: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_IMPORT_ROWS_CEILING,
      items: BulkImportRow,
      description: `At most BULK_IMPORT_MAX_ROWS rows (default 10000; an installation may allow up to ${BULK_IMPORT_ROWS_CEILING}). Give rows or csv.`,
    },
    csv: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_CSV_LENGTH,
      description:
        'Instead of rows: a CSV file (RFC 4180, header line first) with the columns slug, name, type, destination, ' +
        'domain_ulid, brand_ulid, style_ulid, status for URL codes, and gtin, cpv, lot, serial, data, description, ' +
        'link_type, href, title, hreflang, media_type, context, default for gs1 products: one line per link, the lines ' +
        'of one slug (or of one GTIN, cpv, lot and serial when slug is empty) making one code. Any invalid line is a 422 ' +
        'whose errors are keyed csv.<line>.<column> (docs/gs1.md).',
    },
    defaults: {
      type: 'object',
      additionalProperties: false,
      properties: { domain_ulid: ulid, brand_ulid: ulid },
      description: 'Fill domain_ulid and brand_ulid of rows that do not give them.',
    },
  },
  [],
);

export const importParams = objectSchema('codes.bulk.params', { import_ulid: ulid }, ['import_ulid']);

export const confirmImportBody = objectSchema(
  'codes.bulk.confirm.body',
  {
    confirm_token: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'meta.confirm_token of the staging response.',
    },
  },
  ['confirm_token'],
);

const RowError: JsonSchema = {
  type: 'object',
  required: ['row', 'field', 'message'],
  properties: {
    row: { type: 'integer', description: '0-based index of the row in the staged rows.' },
    field: { type: 'string' },
    message: { type: 'string' },
  },
};

const IMPORT_STATUSES = [
  'staged',
  'queued',
  'processing',
  'completed',
  'completed_with_errors',
  'failed',
  'expired',
] as const;

export const BulkImport: JsonSchema = {
  $id: 'BulkImport',
  type: 'object',
  required: ['ulid', 'type', 'status'],
  properties: {
    ulid: { type: 'string' },
    type: { type: 'string', enum: ['qr_codes'] },
    status: { type: 'string', enum: [...IMPORT_STATUSES] },
    source: { type: ['string', 'null'], description: 'api, mcp, web (the dashboard) or cli (qrctl).' },
    awaiting_confirmation: { type: 'boolean' },
    total_rows: { type: 'integer' },
    processed_rows: { type: 'integer' },
    success_count: { type: 'integer' },
    failed_count: { type: 'integer', description: 'Rows valid at staging that could not be created at execution.' },
    skipped_count: { type: 'integer', description: 'Rows invalid at staging, not attempted.' },
    valid_row_count: { type: ['integer', 'null'] },
    progress_percent: { type: 'integer', minimum: 0, maximum: 100 },
    preview_errors: {
      type: 'array',
      items: RowError,
      description: 'Staging errors (the first 1000; /errors lists all).',
    },
    error_message: { type: ['string', 'null'] },
    has_error_report: { type: 'boolean' },
    confirmed_at: nullableDateTime,
    completed_at: nullableDateTime,
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export const StagedImport: JsonSchema = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: BulkImport,
    meta: {
      type: 'object',
      required: ['confirm_token'],
      properties: { confirm_token: { type: 'string', description: 'Valid 24 hours; shown once.' } },
    },
  },
};

export const ImportErrors: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: RowError } },
};

export interface StageImportInput {
  rows?: Record<string, unknown>[];
  csv?: string;
  defaults?: { domain_ulid?: string; brand_ulid?: string };
}

export interface ImportParams {
  import_ulid: string;
}
