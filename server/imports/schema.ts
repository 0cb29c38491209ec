// JSON Schemas of imports (POST /v1/imports and the import it answers with).
import { pageQueryProperties } from '../schemas/paging.js';
import { dateTime, nullableDateTime, objectSchema, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';
import { SOURCES, type SourceName } from './sources/types.js';

/** A schema bound for an uploaded file; BODY_LIMIT_BYTES (5 MiB by default) refuses a body before. */
const MAX_FILE_LENGTH = 64 * 1024 * 1024;

const ON_CLASH = ['skip', 'rename', 'fail'] as const;
type OnClash = (typeof ON_CLASH)[number];

const IMPORT_STATUSES = [
  'previewing',
  'staged',
  'queued',
  'running',
  'completed',
  'completed_with_errors',
  'failed',
  'expired',
] as const;

const credentials: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'How to reach the source: url (its API base, e.g. https://s.example) and api_key (Shlink, Kutt: X-Api-Key), ' +
    'or token (Bitly, Dub: bearer). Sealed at rest and wiped when the import ends.',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    api_key: { type: 'string', minLength: 1, maxLength: 500 },
    token: { type: 'string', minLength: 1, maxLength: 500 },
  },
};

const importOptions: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    domain_ulid: {
      ...ulid,
      description:
        'Domain of links whose short domain is not one of the organization’s domains (default: the first fallback domain).',
    },
    brand_ulid: { ...ulid, description: 'Brand of every imported code.' },
    keep_created_at: { type: 'boolean', default: true, description: 'Codes keep the source’s creation dates.' },
    history: { type: 'boolean', default: true, description: 'Import the scan history where the source has one.' },
    archived: { type: 'boolean', default: false, description: 'Bitly: import archived Bitlinks too.' },
    orphan_visits: {
      type: 'boolean',
      default: false,
      description:
        'Shlink: also import the orphan visits (visits that matched no short URL) onto one paused code, shlink-orphan-visits.',
    },
    on_clash: {
      type: 'string',
      enum: [...ON_CLASH],
      default: 'rename',
      description:
        'A slug already taken here: skip the link, rename it with a suffix (-2, -3, ...), or fail the import.',
    },
  },
};

export const createImportBody = objectSchema(
  'imports.create.body',
  {
    source: { type: 'string', enum: [...SOURCES] },
    credentials,
    file: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_FILE_LENGTH,
      description:
        'An export file’s text: CSV; for YOURLS a CSV or SQL dump; for Bitly and Dub their CSV export instead of the API. Up to BODY_LIMIT_BYTES.',
    },
    log_file: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_FILE_LENGTH,
      description: 'YOURLS as CSV: the yourls_log table (file holds yourls_url).',
    },
    options: importOptions,
  },
  ['source'],
);

export const listImportsQuery = objectSchema('imports.list.query', { ...pageQueryProperties });

export const importParams = objectSchema('imports.params', { import_ulid: ulid }, ['import_ulid']);

export const confirmBody = objectSchema(
  'imports.confirm.body',
  { confirm_token: { type: 'string', minLength: 1, maxLength: 200 } },
  ['confirm_token'],
);

export const resumeBody = objectSchema('imports.resume.body', { credentials }, []);

const problem: JsonSchema = {
  type: 'object',
  required: ['field', 'message'],
  properties: { field: { type: 'string' }, message: { type: 'string' } },
};

const linkReport: JsonSchema = {
  type: 'object',
  properties: {
    short_code: { type: 'string' },
    source_domain: { type: 'string' },
    slug: { type: ['string', 'null'] },
    domain_host: { type: ['string', 'null'] },
    destination: { type: ['string', 'null'] },
    status: { type: 'string' },
    problems: { type: 'array', items: problem },
  },
};

export const ImportOut: JsonSchema = {
  $id: 'Import',
  type: 'object',
  required: ['ulid', 'source', 'status', 'progress'],
  properties: {
    ulid: { type: 'string' },
    source: { type: 'string', enum: [...SOURCES] },
    status: { type: 'string', enum: [...IMPORT_STATUSES] },
    awaiting_confirmation: { type: 'boolean' },
    options: { type: 'object' },
    progress: {
      type: 'object',
      properties: {
        links_total: { type: 'integer' },
        links_done: { type: 'integer' },
        links_created: { type: 'integer' },
        links_matched: { type: 'integer', description: 'Imported by an earlier run: only newer scans are added.' },
        links_renamed: { type: 'integer' },
        links_skipped: { type: 'integer' },
        links_failed: { type: 'integer' },
        scans_total: { type: 'integer', description: 'Scans the source reported (an estimate).' },
        scans_done: { type: 'integer' },
        percent: { type: 'integer', minimum: 0, maximum: 100 },
        eta_seconds: { type: ['integer', 'null'] },
      },
    },
    preview: {
      type: ['object', 'null'],
      description: 'Counts, the first 50 mappings, every clash and every unmappable field, the plan’s code limit.',
      properties: {
        counts: {
          type: 'object',
          properties: Object.fromEntries(
            [
              'links',
              'new',
              'matched',
              'clashes',
              'renamed',
              'domains_not_kept',
              'skipped',
              'failed',
              'unmappable_links',
              'scans_expected',
            ].map((k) => [k, { type: 'integer' }]),
          ),
        },
        mappings: { type: 'array', items: linkReport },
        clashes: { type: 'array', items: linkReport },
        unmappable: { type: 'array', items: linkReport },
        code_limit: {
          type: 'object',
          properties: {
            limit: { type: ['integer', 'null'], description: 'The plan’s max_codes (null: no limit).' },
            live: { type: 'integer' },
            new: { type: 'integer' },
            exceeded: { type: 'boolean' },
          },
        },
      },
    },
    error_message: { type: ['string', 'null'] },
    resumable: { type: 'boolean', description: 'Failed with a continue token: POST .../resume goes on from there.' },
    confirmed_at: nullableDateTime,
    started_at: nullableDateTime,
    completed_at: nullableDateTime,
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export const ImportReport: JsonSchema = {
  type: 'object',
  required: ['data'],
  properties: { data: { type: 'array', items: linkReport } },
};

export interface ImportOptions {
  domain_ulid?: string;
  brand_ulid?: string;
  keep_created_at?: boolean;
  history?: boolean;
  on_clash?: OnClash;
  archived?: boolean;
  orphan_visits?: boolean;
}

export interface Credentials {
  url?: string;
  api_key?: string;
  token?: string;
}

export interface CreateImportInput {
  source: SourceName;
  credentials?: Credentials;
  file?: string;
  log_file?: string;
  options?: ImportOptions;
}

export interface ImportParams {
  import_ulid: string;
}
