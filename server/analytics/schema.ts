// Query schemas (validated and coerced by ajv; bad range, dimension, limit or offset is 422) and
// the payload schemas of the four analytics operations.
import { dateTime, objectSchema, ulid } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';
import { ACTIONS as LANDING_ACTIONS } from '../landing/page.js';
import { CONSENT_OUTCOMES } from '../qr-codes/pixels.js';

const RANGES = [7, 30, 90] as const;
export type RangeDays = (typeof RANGES)[number];

/**
 * Dimensions of the organization-level endpoints (spec: country, device, referrer, language; then
 * the pixel consent, the operating system, the browser and the landing-page actions).
 */
const ORG_DIMENSIONS = [
  'country',
  'device',
  'referrer',
  'language',
  'consent',
  'os',
  'browser',
  'action',
  'gtin',
  'lot',
] as const;
/** The per-code endpoint adds provider. */
const CODE_DIMENSIONS = [
  'country',
  'device',
  'referrer',
  'language',
  'provider',
  'consent',
  'os',
  'browser',
  'action',
  'gtin',
  'lot',
] as const;

/** What the gtin and lot dimensions count (docs/gs1.md). */
const GS1_DIMENSIONS_NOTE =
  'gtin: the resolutions of gs1 codes per product (GTIN-14); lot: per GTIN and lot (<gtin-14>/<lot>), only the resolutions that name a lot. ' +
  'Both count GS1 resolutions only (totals and time_series count every scan of the scope).';

/** What a dimension's description says of the ones past the contract's four. */
const DIMENSION_NOTE =
  'Breakdown dimension (default country). consent: the tracking-pixel consent outcomes (granted, denied, none, ' +
  'not_required) of the scans of codes with pixels. os and browser: of the scanning device. action: what ' +
  'visitors did on the landing pages (vcard, ics, link, app_store, play_store, website), each with its count ' +
  "(scans) and distinct visitors (uniques); the export's csv_rows give them per day. " +
  'consent, os, browser and action are counted from the raw scans of the range rather than the daily rollup. ' +
  GS1_DIMENSIONS_NOTE;

export const RAW_EXPORT_MAX_LIMIT = 5000;
const RAW_EXPORT_DEFAULT_LIMIT = 1000;

const range: JsonSchema = {
  type: 'integer',
  minimum: Math.min(...RANGES),
  maximum: Math.max(...RANGES),
  enum: [...RANGES],
  default: 30,
  description: 'The last N UTC days, today included: 7, 30 or 90.',
};

/**
 * Scans whose user agent is a known bot, crawler or command-line client (curl, wget, link
 * previewers) are recorded with is_bot and left out of analytics unless this is true.
 */
export const BOTS_LEFT_OUT =
  'Scans by bots (user agents of crawlers, link previewers and command-line clients such as curl) are left ' +
  'out unless include_bots is true.';

/** BOTS_LEFT_OUT, and why a code's redirects_count can be higher. */
export const BOTS_NOTE =
  'Scans from bots, crawlers and command-line clients such as curl (classified by user agent) are ' +
  "recorded but left out unless include_bots=true, so a code's redirects_count, which counts every " +
  'redirect, can be higher than these scans.';

const includeBots: JsonSchema = {
  type: 'boolean',
  default: false,
  description:
    'true counts scans classified as bots (user agents of bots, crawlers and command-line clients such ' +
    'as curl; device type "bot") as well; default false leaves them out.',
};

export interface AnalyticsQuery {
  range: RangeDays;
  dimension: (typeof ORG_DIMENSIONS)[number];
  brand_ulid?: string;
  code_ulid?: string;
  /** Default false (ajv fills it in). */
  include_bots?: boolean;
  /** Default false: hourly_series of the last 48 hours. */
  hourly?: boolean;
}

export const analyticsQuery = objectSchema('AnalyticsQuery', {
  range,
  dimension: {
    type: 'string',
    enum: [...ORG_DIMENSIONS],
    default: 'country',
    description: DIMENSION_NOTE,
  },
  brand_ulid: { ...ulid, description: 'Limit to one brand of the organization.' },
  code_ulid: { ...ulid, description: 'Limit to one QR code of the organization.' },
  include_bots: includeBots,
  hourly: {
    type: 'boolean',
    default: false,
    description: 'true adds hourly_series: the scans of each of the last 48 UTC hours (the current hour last).',
  },
});

export const scanStreamQuery = objectSchema('ScanStreamQuery', {
  code_ulid: { ...ulid, description: 'Only scans of this QR code of the organization.' },
  brand_ulid: { ...ulid, description: 'Only scans of codes of this brand.' },
  domain_ulid: {
    ...ulid,
    description: 'Only scans served on this domain (a shared fallback domain: every scan on the shared hosts).',
  },
  include_bots: includeBots,
});

export interface CodeAnalyticsQuery {
  range: RangeDays;
  dimension: (typeof CODE_DIMENSIONS)[number];
  /** Default false (ajv fills it in). */
  include_bots?: boolean;
}

export const codeAnalyticsQuery = objectSchema('CodeAnalyticsQuery', {
  range,
  dimension: {
    type: 'string',
    enum: [...CODE_DIMENSIONS],
    default: 'country',
    description: DIMENSION_NOTE,
  },
  include_bots: includeBots,
});

export interface CodeParams {
  code_ulid: string;
}

export const codeParams = objectSchema('AnalyticsCodeParams', { code_ulid: ulid }, ['code_ulid']);

export interface RawExportQuery {
  range: RangeDays;
  /** scans (default; ajv fills it in) or actions. */
  kind?: 'scans' | 'actions';
  limit: number;
  offset: number;
  cursor?: string;
  /** Default false (ajv fills it in). */
  include_bots?: boolean;
}

export const rawExportQuery = objectSchema('RawExportQuery', {
  range,
  kind: {
    type: 'string',
    enum: ['scans', 'actions'],
    default: 'scans',
    description:
      'scans (default): the scans of the code. actions: what visitors did on its landing page (downloads, links, ' +
      "store badges, website) and its pixel page's consent answers (consent_<outcome>), one row each, paged the same way.",
  },
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: RAW_EXPORT_MAX_LIMIT,
    default: RAW_EXPORT_DEFAULT_LIMIT,
    description: 'Page size, 1 to 5000.',
  },
  offset: {
    type: 'integer',
    minimum: 0,
    maximum: 1_000_000_000,
    default: 0,
    description: 'Rows to skip (after the cursor, when one is given).',
  },
  cursor: {
    type: 'string',
    maxLength: 200,
    ...patterned('^[A-Za-z0-9_-]{1,200}$', 'Must be meta.next_cursor of the previous page.'),
    description: 'Keyset cursor from meta.next_cursor of the previous page; deep pages stay fast.',
  },
  include_bots: includeBots,
});

export interface ConversionsExportQuery {
  range: RangeDays;
  limit: number;
  offset: number;
}

export const conversionsExportQuery = objectSchema('ConversionsExportQuery', {
  range,
  limit: (rawExportQuery.properties as Record<string, JsonSchema>).limit,
  offset: (rawExportQuery.properties as Record<string, JsonSchema>).offset,
});

const count = { type: 'integer', minimum: 0 };

/** The code's slug as stored and as the code resource shows it. */
const storedSlug: JsonSchema = {
  type: 'string',
  description: 'The stored form `<org-slug>/<slug>`, as on the QR code.',
};

const Totals: JsonSchema = {
  $id: 'AnalyticsTotals',
  type: 'object',
  description: `Scans and distinct visitors of the range. ${BOTS_NOTE}`,
  required: ['scans', 'uniques', 'unique_rate'],
  properties: {
    scans: count,
    uniques: count,
    unique_rate: { type: 'number', minimum: 0, maximum: 1, description: 'uniques / scans; 0 when there are no scans.' },
  },
};

const timeSeries: JsonSchema = {
  type: 'array',
  description: 'Every day of the range, oldest first, zeros included.',
  items: {
    type: 'object',
    required: ['date', 'scans'],
    properties: { date: { type: 'string', format: 'date' }, scans: count },
  },
};

const dimensionBreakdown: JsonSchema = {
  type: 'array',
  description: 'One entry per value of the dimension, most scanned first.',
  items: {
    type: 'object',
    required: ['label', 'scans', 'uniques'],
    properties: {
      label: { type: 'string', description: 'Human-readable value (country name, device type, ...).' },
      key: { type: 'string', description: 'The raw value (ISO country code, device type, host, ...); "" unknown.' },
      scans: count,
      uniques: count,
    },
  },
};

/** What the organization-level and the per-code payloads share. */
const rollupProperties = {
  range_days: { type: 'integer', enum: [...RANGES] },
  totals: Totals,
  time_series: timeSeries,
  dimension: { type: 'string' },
  dimension_label: { type: 'string' },
  dimension_breakdown: dimensionBreakdown,
};

const CONVERSIONS_OF_SCOPE =
  'Conversions recorded in the range (POST /v1/conversions) of the scope: count, distinct visitors of their scans, and the amounts per currency.';

/** Conversions: count, distinct visitors of their scans, amounts per currency. */
function conversionTotals(
  description: string,
  extra: Record<string, JsonSchema> = {},
  required: string[] = [],
): JsonSchema {
  return {
    type: 'object',
    required: [...required, 'count', 'unique_visitors', 'amounts'],
    description,
    properties: {
      ...extra,
      count: count,
      unique_visitors: count,
      amounts: {
        type: 'array',
        description: 'One entry per currency, in currency code order.',
        items: {
          type: 'object',
          required: ['currency', 'amount'],
          properties: {
            currency: { type: 'string' },
            amount: { type: 'string', description: 'Decimal, in the currency’s exponent.' },
          },
        },
      },
    },
  };
}

/** A brand's or a code's conversions (conversions.by_brand, conversions.by_code). */
const conversionEntry = conversionTotals(
  'The conversions of one brand or code.',
  {
    key: { type: 'string', description: 'The ULID of the brand or code; "" for codes without a brand.' },
    label: { type: 'string' },
  },
  ['key', 'label'],
);

/** A brand or code with its scans and distinct visitors (child_breakdown, top_codes). */
const childEntry: JsonSchema = {
  type: 'object',
  required: ['key', 'label', 'scans', 'uniques'],
  properties: { key: { type: 'string' }, label: { type: 'string' }, scans: count, uniques: count },
};

export const AnalyticsPayload: JsonSchema = {
  $id: 'Analytics',
  type: 'object',
  required: ['scope_level', 'range_days', 'totals'],
  properties: {
    scope_level: { type: 'string', enum: ['organization', 'brand', 'code'] },
    ...rollupProperties,
    conversions: conversionTotals(CONVERSIONS_OF_SCOPE, {
      by_brand: {
        type: 'array',
        description:
          'Organization scope: the conversions per brand ("" key, label No brand: codes without a brand), most first.',
        items: conversionEntry,
      },
      by_code: {
        type: 'array',
        description: 'Organization and brand scope: the conversions per code, most first; the 100 codes with the most.',
        items: conversionEntry,
      },
    }),
    child_breakdown: {
      type: 'array',
      description: 'Organization scope: brands ("" key: codes without a brand); brand scope: codes; code scope: none.',
      items: childEntry,
    },
    hourly_series: {
      type: 'array',
      description:
        'With hourly=true: every hour of the last 48 UTC hours, oldest first, the current (partial) hour last, zeros included.',
      items: {
        type: 'object',
        required: ['hour', 'scans'],
        properties: { hour: { ...dateTime, description: 'The start of the hour (UTC).' }, scans: count },
      },
    },
    top_codes: {
      type: 'array',
      description: 'Organization scope: the ten codes with the most scans in the range, most first.',
      items: childEntry,
    },
    csv_rows: {
      type: 'array',
      description:
        'Export only: {date, <dimension>, scans} per day and dimension value with scans. For every dimension but ' +
        'consent also conversions (recorded that day whose scan had that value) and conversion_amount_<CURRENCY> ' +
        'for each currency of the range’s conversions; a day and value with conversions only has scans 0.',
      items: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
    },
  },
};

export const CodeAnalyticsPayload: JsonSchema = {
  $id: 'CodeAnalytics',
  type: 'object',
  required: ['qr_code', 'range_days', 'totals'],
  properties: {
    qr_code: {
      type: 'object',
      required: ['ulid', 'name', 'slug'],
      properties: { ulid: { type: 'string' }, name: { type: ['string', 'null'] }, slug: storedSlug },
    },
    ...rollupProperties,
    conversions: conversionTotals(CONVERSIONS_OF_SCOPE),
    actions: {
      type: 'array',
      description:
        'Landing-page codes (vcard, links, app, event) only: what visitors did on the page after the scan ' +
        '(vcard and ics downloads, link, app_store, play_store, website), with counts and distinct visitors.',
      items: {
        type: 'object',
        required: ['action', 'count', 'unique_visitors'],
        properties: {
          action: { type: 'string', enum: [...LANDING_ACTIONS] },
          count: { type: 'integer' },
          unique_visitors: { type: 'integer' },
        },
      },
    },
  },
};

/** The paging meta of an export page (the raw export adds its cursor). */
function pageMeta(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return {
    type: 'object',
    required: ['count', 'limit', 'offset', 'has_more'],
    properties: {
      count: count,
      limit: { type: 'integer' },
      offset: { type: 'integer' },
      has_more: { type: 'boolean' },
      ...extra,
    },
  };
}

const RawExportScan: JsonSchema = {
  $id: 'RawExportScan',
  type: 'object',
  description: 'One scan (kind=scans).',
  required: ['scan_id', 'scanned_at', 'country', 'device_type', 'referrer'],
  properties: {
    scan_id: { type: 'string' },
    scanned_at: dateTime,
    country: { type: 'string' },
    device_type: { type: 'string' },
    os: { type: 'string' },
    browser: { type: 'string' },
    referrer: { type: 'string' },
    language: { type: 'string' },
    provider: { type: 'string' },
    visitor_id: { type: 'string', description: 'Pseudonymous visitor (salted hash, hex); no IP is stored.' },
    matched_rule: { type: ['integer', 'null'] },
  },
};

/** Every action scan_actions holds: the landing page's, and the pixel page's consent answers. */
const SCAN_ACTIONS = [...LANDING_ACTIONS, 'consent_asked', ...CONSENT_OUTCOMES.map((o) => `consent_${o}`)];

const RawExportAction: JsonSchema = {
  $id: 'RawExportAction',
  type: 'object',
  description: 'One action on the landing page or answer of the pixel page (kind=actions).',
  required: ['action_id', 'scanned_at', 'action', 'target', 'visitor_id', 'bot'],
  properties: {
    action_id: { type: 'string' },
    scanned_at: dateTime,
    action: {
      type: 'string',
      enum: SCAN_ACTIONS,
      description:
        'vcard and ics: the downloads; link: a link of a links page; app_store, play_store, website: the ' +
        "buttons; consent_asked: the pixel page asked for consent (the scan's outcome is none until an answer follows); consent_<outcome>: its answer.",
    },
    target: { type: ['integer', 'null'], description: "The link's index (0-based) for link, else null." },
    visitor_id: { type: 'string', description: "The visitor (as in the scans' visitor_id)." },
    bot: { type: 'boolean' },
  },
};

export const RawExportPayload: JsonSchema = {
  $id: 'RawExport',
  type: 'object',
  required: ['qr_code', 'rows', 'meta'],
  properties: {
    qr_code: {
      type: 'object',
      required: ['ulid', 'slug'],
      properties: { ulid: { type: 'string' }, slug: storedSlug },
    },
    rows: {
      type: 'array',
      description:
        'Scans in (scanned_at, scan_id) order. Bots are left out unless include_bots=true; their rows ' +
        'then have device_type "bot". With kind=actions: actions in (scanned_at, action_id) order.',
      items: { oneOf: [RawExportScan, RawExportAction] },
    },
    meta: pageMeta({
      next_cursor: { type: ['string', 'null'], description: 'Pass as cursor to read the next page.' },
    }),
  },
};

const nullableString: JsonSchema = { type: ['string', 'null'] };

export const ConversionsExportPayload: JsonSchema = {
  $id: 'ConversionsExport',
  type: 'object',
  required: ['qr_code', 'rows', 'meta'],
  properties: {
    qr_code: (RawExportPayload.properties as Record<string, JsonSchema>).qr_code,
    rows: {
      type: 'array',
      description: 'Conversions of the code recorded in the range, in (created_at, ulid) order.',
      items: {
        type: 'object',
        required: ['ulid', 'created_at', 'scan_id', 'scanned_at', 'event', 'external_id', 'amount', 'currency'],
        properties: {
          ulid: { type: 'string' },
          created_at: dateTime,
          scan_id: { type: 'string', description: 'The converted scan (scan_id of the raw export).' },
          scanned_at: dateTime,
          event: { type: 'string' },
          external_id: nullableString,
          amount: { ...nullableString, description: 'Decimal, in the currency’s exponent.' },
          currency: nullableString,
          visitor_id: { type: 'string', description: 'The scan’s visitor_id, as in the raw export.' },
          country: { type: 'string', description: 'The scan’s values, as in the raw export ("" unknown).' },
          device_type: { type: 'string' },
          referrer: { type: 'string' },
          language: { type: 'string' },
          provider: { type: 'string' },
        },
      },
    },
    meta: pageMeta(),
  },
};
