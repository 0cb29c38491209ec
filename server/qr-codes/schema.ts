// JSON Schemas of QR codes: the payload, the request bodies and the list query. The same schemas
// validate REST requests, document the OpenAPI paths and become the MCP tools' inputSchema.
// Rules the schemas cannot say (URL parsing, IANA time zones, date order, ownership of the
// referenced domain, brand and style) are checked by validate.ts and the service.
import { dateTime, httpUrl, nullableDateTime, nullableUlid, objectSchema, ulid } from '../schemas/common.js';
import { pagedEnvelope, pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { HTTP_URL_PATTERN, MAX_URL_LENGTH } from '../schemas/http-url.js';
import { patterned, REQUIRED_MESSAGE, withDocumentForm, type JsonSchema } from '../schemas/validation.js';
import { LandingConfig } from './landing-config.js';
import { trackingPixelsOut, TrackingPixels, type TrackingPixel } from './pixels.js';
import { CustomJs } from './custom-js.js';
import { CODE_TYPES, DESTINATION_SCHEMAS, INPUT_TYPES, STATIC_TYPES, type InputType } from './types.js';

export const SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$';
export const CODE_STATUSES = ['active', 'paused', 'archived'] as const;
export type CodeStatus = (typeof CODE_STATUSES)[number];
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const DEVICES = ['mobile', 'tablet', 'desktop', 'bot', 'other'] as const;

const url = httpUrl;

/**
 * A URL string or an object {url}. One schema with type [string, object]: string keywords apply
 * to strings and object keywords to objects, which keeps the error messages plain (no oneOf).
 */
const urlDestination: JsonSchema = {
  type: ['string', 'object'],
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  ...patterned(HTTP_URL_PATTERN, 'Must be an http or https URL, or an object {url}.'),
  required: ['url'],
  properties: { url },
  additionalProperties: false,
  // Tool inputs take one type per schema.
  'x-mcp': { anyOf: [url, { type: 'object', required: ['url'], properties: { url }, additionalProperties: false }] },
  description:
    'An http or https URL (at most 2048 characters), as a string or as an object {url}. Echoed in the ' +
    'shape given, with the URL normalised (host in punycode, path and query percent-encoded).',
};

const stringList = (item: JsonSchema): JsonSchema => ({
  type: 'array',
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  items: item,
});

// Routing and Schedule carry no $id: they are inlined into both bodies (nullable there), which keeps
// ajv from seeing one $id twice and gives MCP tools a self-contained inputSchema.
const RoutingRule: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['conditions'],
  description:
    'Conditions are ANDed; a list matches when the visitor has any of its values; an empty ' +
    'conditions object matches every visitor. A rule sends to its destination, or splits between ' +
    'weighted variants (stable per visitor).',
  properties: {
    conditions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        device: stringList({ type: 'string', enum: [...DEVICES] }),
        os: stringList({
          type: 'string',
          minLength: 1,
          maxLength: 50,
          description: 'e.g. iOS, Android, Windows, Mac OS.',
        }),
        country: stringList({
          type: 'string',
          maxLength: 2,
          ...patterned('^[A-Za-z]{2}$', 'Must be an ISO 3166-1 alpha-2 country code, e.g. DE.'),
          description: 'ISO 3166-1 alpha-2.',
        }),
        language: stringList({
          type: 'string',
          maxLength: 3,
          ...patterned('^[A-Za-z]{2,3}$', 'Must be a primary language subtag of 2 or 3 letters, e.g. en.'),
          description: 'Primary language subtag, e.g. en.',
        }),
      },
    },
    destination: url,
    variants: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['destination', 'weight'],
        properties: { destination: url, weight: { type: 'integer', minimum: 1, maximum: 10000 } },
      },
    },
  },
};

const Routing: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  description: 'An ordered list of rules; the first match wins, else the code’s destination.',
  properties: { rules: { type: 'array', maxItems: 50, items: RoutingRule } },
};

const hhmm: JsonSchema = {
  type: 'string',
  maxLength: 5,
  ...patterned('^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$', 'Must be a time HH:MM from 00:00 to 24:00.'),
  description: 'HH:MM, 00:00 to 24:00.',
};

const Schedule: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  description:
    'Weekly windows in an IANA time zone. Start is inclusive, end exclusive; an end before the start ' +
    'spans midnight. Outside every window the fallback destination applies (410 without one).',
  properties: {
    enabled: { type: 'boolean' },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin.' },
    windows: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['days', 'start', 'end'],
        properties: {
          days: {
            type: 'array',
            minItems: 1,
            maxItems: 7,
            uniqueItems: true,
            items: { type: 'string', enum: [...DAYS] },
          },
          start: hhmm,
          end: hhmm,
        },
      },
    },
    fallback_destination: { ...url, type: ['string', 'null'] },
  },
};

/** A code's domain is always chosen by the caller; the message says where the choices are. */
export const DOMAIN_ULID_REQUIRED =
  'This field is required: the ULID of one of your domains. GET /v1/domains (MCP: domains_list) lists ' +
  'them; the shared fallback domain (type "fallback") works for a first code.';

const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });

const utmParams: JsonSchema = {
  type: 'object',
  maxProperties: 20,
  propertyNames: {
    maxLength: 64,
    ...patterned('^[A-Za-z0-9_.-]{1,64}$', 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _, . and -.'),
  },
  additionalProperties: { type: 'string', maxLength: 255 },
  description:
    'Query parameters appended to the destination (utm_ is prefixed when missing); never replaces a key the URL already has.',
};

/**
 * The destination field of a body: its shape depends on `type`, so the body says which schema
 * applies per type (typedDestinations); on its own the field only says "a URL or an object".
 */
const destination: JsonSchema = {
  type: ['string', 'object'],
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  // Tool inputs take one type per schema.
  'x-mcp': {
    anyOf: [
      { ...url, description: 'For type url (the default): the URL the code redirects to.' },
      {
        type: 'object',
        description:
          'For type url: {url}. For every other type: the destination object of that type, as the if/then entries of this input schema give it.',
      },
    ],
  },
  description:
    'For type url (the default): an http or https URL (at most 2048 characters), as a string or {url}, echoed in ' +
    'the shape given with the URL normalised. For every other type: an object of that type’s schema ' +
    '(components Destination.<type>; docs/resources-qr-codes.md).',
};

/**
 * One `if type is T then destination is T's schema` per type. With `typeRequired` (PATCH) a body
 * without `type` is left to the service, which checks the destination against the stored type.
 */
function typedDestinations(typeRequired: boolean): JsonSchema[] {
  const when = (types: string[], absentMatches: boolean): JsonSchema => ({
    properties: { type: { enum: types } },
    ...(absentMatches ? {} : { required: ['type'] }),
  });
  return [
    { if: when(['url', 'redirect'], !typeRequired), then: { properties: { destination: urlDestination } } },
    // Only a url takes a string: without type, a string destination is a URL whatever the stored type.
    ...(typeRequired
      ? [
          {
            if: {
              not: { required: ['type'] },
              properties: { destination: { type: 'string', maxLength: MAX_URL_LENGTH } },
            },
            then: { properties: { destination: urlDestination } },
          },
        ]
      : []),
    ...Object.entries(DESTINATION_SCHEMAS).map(([t, schema]) => ({
      if: when([t], false),
      then: { properties: { destination: schema } },
    })),
  ];
}

/** Fields settable on create and update (PATCH makes every one optional and nullable where it can be cleared). */
const writable = {
  name: { type: ['string', 'null'], maxLength: 255 },
  slug: {
    type: 'string',
    maxLength: 64,
    ...patterned(SLUG_PATTERN, 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.'),
    description: '1 to 64 of [A-Za-z0-9_-]; stored as `<org-slug>/<slug>`.',
  },
  destination,
  type: {
    type: 'string',
    enum: [...INPUT_TYPES],
    description:
      'What the code carries (default url; `redirect` is accepted as its alias). Dynamic: url, vcard, links, app, ' +
      'event, gs1 (the QR encodes public_url; scans are recorded; a gs1 code’s public_url is its GS1 Digital Link ' +
      'URI, see docs/gs1.md). Static: ' +
      `${STATIC_TYPES.join(', ')} (the QR encodes the payload itself; not trackable). A type changes between ` +
      'dynamic types only.',
  },
  landing_config: { ...LandingConfig, type: ['object', 'null'] },
  status: { type: 'string', enum: [...CODE_STATUSES] },
  domain_ulid: {
    ...ulid,
    description:
      'A shared fallback domain or a custom domain of the organization: the ulid of an entry of GET /v1/domains.',
    [REQUIRED_MESSAGE]: DOMAIN_ULID_REQUIRED,
  },
  brand_ulid: nullableUlid,
  style_ulid: nullableUlid,
  redirect_cap: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 2147483647,
    description: 'Plan-gated (redirect_cap).',
  },
  password: {
    type: ['string', 'null'],
    minLength: 1,
    maxLength: 128,
    description: 'Plan-gated (password). Stored hashed; null removes it.',
  },
  routing: {
    ...Routing,
    type: ['object', 'null'],
    description: `Plan-gated (routing). ${String(Routing.description)}`,
  },
  schedule: {
    ...Schedule,
    type: ['object', 'null'],
    description: `Plan-gated (schedule). ${String(Schedule.description)}`,
  },
  date_begin: nullableDateTime,
  expire_at: nullableDateTime,
  utm_params: nullable(utmParams),
  tracking_pixels: TrackingPixels,
  custom_js: CustomJs,
  conversion_tracking: {
    type: 'boolean',
    description:
      'true: the redirect appends qr_scan=<scan id> to the destination, for POST /v1/conversions (docs/conversions.md).',
  },
  prelander_enabled: { type: 'boolean' },
  prelander_seconds: { type: ['integer', 'null'], minimum: 0, maximum: 60 },
  prelander_message: { type: ['string', 'null'], maxLength: 1000 },
  settings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      scan_alerts: {
        type: 'boolean',
        description:
          'true: code.scans_dropped and code.scans_spiked webhook events for this code; false: none even when its brand opts in. Omitted: as its brand says.',
      },
    },
    description: 'Per-code settings; replaces the stored ones.',
  },
} satisfies Record<string, JsonSchema>;

const CREATE_REQUIRED = ['slug', 'destination', 'domain_ulid'];

/**
 * A body as the OpenAPI document shows it: one schema per type (`<id>.<type>`: the writable fields
 * with that type's `type` and `destination`, `type` required) under `oneOf` with a `discriminator`
 * on `type`, whose mapping sends `redirect` to the url schema as well; beside it, under an outer
 * `oneOf`, the body without `type` (`<id>.untyped`): on create a url code (the default type), on
 * update a change that keeps the stored type. Built from the same fields and destination schemas
 * as the body that validates requests (whose if/then form gives per-field messages), so the two
 * cannot differ.
 */
function bodiesByType(id: string, required: string[], untypedDestination: JsonSchema): JsonSchema {
  const { type: typeField, ...untyped } = writable;
  const member = (types: string[], destination: JsonSchema): JsonSchema => ({
    ...objectSchema(`${id}.${types[0]}`, { ...writable, type: { ...typeField, enum: types }, destination }, [
      ...required,
      'type',
    ]),
    description:
      types[0] === 'url'
        ? 'A url code (`redirect` is its alias): destination is a URL or {url}.'
        : `A ${types[0]} code: destination is Destination.${types[0]}.`,
  });
  const members = [
    member(['url', 'redirect'], urlDestination),
    ...Object.entries(DESTINATION_SCHEMAS).map(([t, schema]) => member([t], schema)),
  ];
  const mapping: Record<string, string> = {};
  for (const m of members) {
    for (const t of (m.properties as { type: { enum: string[] } }).type.enum)
      mapping[t] = `#/components/schemas/${String(m.$id)}`;
  }
  return {
    oneOf: [
      {
        $id: `${id}.typed`,
        description: 'A body with type: the schema of that type.',
        oneOf: members,
        discriminator: { propertyName: 'type', mapping },
      },
      {
        ...objectSchema(`${id}.untyped`, { ...untyped, destination: untypedDestination }, required),
        description:
          required.length > 0
            ? 'A body without type: a url code (the default type).'
            : 'A body without type: the code keeps its type, and a destination is checked against it.',
      },
    ],
  };
}

export const createCodeBody: JsonSchema = withDocumentForm(
  { ...objectSchema('codes.create.body', writable, CREATE_REQUIRED), allOf: typedDestinations(false) },
  bodiesByType('codes.create.body', CREATE_REQUIRED, urlDestination),
);

export const updateCodeBody: JsonSchema = withDocumentForm(
  { ...objectSchema('codes.update.body', writable), allOf: typedDestinations(true) },
  bodiesByType('codes.update.body', [], destination),
);

export const codeParams = objectSchema('codes.params', { code_ulid: ulid }, ['code_ulid']);

/** Orders of the code list: creation order either way, or by name (the slug when there is none). */
const CODE_ORDERS = ['oldest', 'newest', 'name', 'name_desc'] as const;

export interface ListCodesQuery extends PageQuery {
  search?: string;
  status?: CodeStatus;
  type?: (typeof CODE_TYPES)[number];
  brand_ulid?: string;
  domain_ulid?: string;
  gtin?: string;
  order: (typeof CODE_ORDERS)[number];
}

export const listCodesQuery = objectSchema('codes.list.query', {
  ...pageQueryProperties,
  search: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'Only codes whose name, slug or destination URL contains this text (any case).',
  },
  status: { type: 'string', enum: [...CODE_STATUSES], description: 'Only codes with this status.' },
  type: { type: 'string', enum: [...CODE_TYPES], description: 'Only codes of this type.' },
  brand_ulid: { ...ulid, description: 'Only codes of this brand of the organization (404 when there is none).' },
  domain_ulid: {
    ...ulid,
    description: 'Only codes on this domain (one of the organization’s, or a shared one; 404 when there is none).',
  },
  gtin: {
    type: 'string',
    maxLength: 14,
    ...patterned('^([0-9]{8}|[0-9]{12,14})$', 'Must be a GTIN of 8, 12, 13 or 14 digits.'),
    description:
      'Only the gs1 codes of this GTIN (the product and its lots and serials); any length, compared as GTIN-14.',
  },
  order: {
    type: 'string',
    enum: [...CODE_ORDERS],
    default: 'oldest',
    description:
      'oldest (default): creation order; newest: newest first; name and name_desc: by name, any case (a code without a name by its slug), A to Z or Z to A, ties in creation order.',
  },
});

const named: JsonSchema = {
  type: ['object', 'null'],
  required: ['ulid', 'name'],
  properties: { ulid: { type: 'string' }, name: { type: 'string' } },
};

/** Fields a code payload carries that this API does not set: routing and schedule replace the first two. */
const reserved = 'Reserved: not settable through this API; null.';

export const QrCode: JsonSchema = {
  $id: 'QrCode',
  type: 'object',
  required: ['ulid', 'slug', 'type', 'status', 'public_url'],
  properties: {
    ulid: { type: 'string' },
    name: { type: ['string', 'null'] },
    slug: { type: 'string', description: '`<org-slug>/<slug>`.' },
    type: { type: 'string', enum: [...CODE_TYPES] },
    trackable: {
      type: 'boolean',
      description: 'false for static types: the QR holds the payload, so scans are not seen and not counted.',
    },
    status: { type: 'string', enum: [...CODE_STATUSES] },
    public_url: { type: 'string', format: 'uri' },
    destination: {
      type: ['string', 'object'],
      description:
        'url: in the shape given (a URL string or {url}), the URL normalised; other types: the object of the type’s schema.',
    },
    routing: { type: ['object', 'null'] },
    schedule: { type: ['object', 'null'] },
    password: { type: 'boolean', description: 'Whether a password is set.' },
    redirects_count: {
      type: 'integer',
      description:
        'Every redirect or landing page served, bots included (analytics leave bots out unless include_bots=true). ' +
        'Absent for static types, which cannot be counted.',
    },
    brand: named,
    domain: {
      type: 'object',
      required: ['ulid', 'host'],
      properties: { ulid: { type: 'string' }, host: { type: 'string' } },
    },
    style: named,
    date_begin: nullableDateTime,
    expire_at: nullableDateTime,
    redirect_cap: { type: ['integer', 'null'] },
    utm_params: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
    device_routing: { type: ['object', 'null'], description: reserved },
    language_routing: { type: ['object', 'null'], description: reserved },
    tracking_pixels: trackingPixelsOut(
      'The code’s own pixels {provider, id}; null: none of its own (its brand’s default list applies). See docs/pixels.md.',
    ),
    custom_js: {
      type: ['string', 'null'],
      description:
        'The code’s own script (Enterprise; only on a verified custom domain), served as a separate file with its hash in the page’s CSP; null: none. See docs/pixels.md.',
    },
    landing_config: { type: ['object', 'null'], description: 'The landing page of vcard, links, app and event codes.' },
    conversion_tracking: { type: 'boolean' },
    prelander_enabled: { type: 'boolean' },
    prelander_seconds: { type: ['integer', 'null'] },
    prelander_message: { type: ['string', 'null'] },
    settings: { type: 'object', properties: { scan_alerts: { type: 'boolean' } } },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

export const CodeList = pagedEnvelope(QrCode);

export interface CodeWrite {
  name?: string | null;
  slug?: string;
  destination?: string | Record<string, unknown>;
  type?: InputType;
  landing_config?: Record<string, unknown> | null;
  status?: CodeStatus;
  domain_ulid?: string;
  brand_ulid?: string | null;
  style_ulid?: string | null;
  redirect_cap?: number | null;
  password?: string | null;
  routing?: Record<string, unknown> | null;
  schedule?: Record<string, unknown> | null;
  date_begin?: string | null;
  expire_at?: string | null;
  utm_params?: Record<string, string> | null;
  tracking_pixels?: TrackingPixel[] | null;
  custom_js?: string | null;
  conversion_tracking?: boolean;
  prelander_enabled?: boolean;
  prelander_seconds?: number | null;
  prelander_message?: string | null;
  settings?: CodeSettings;
}

export interface CodeSettings {
  scan_alerts?: boolean;
}

export interface CodeParams {
  code_ulid: string;
}

/** The draft of a code whose QR image is previewed before it is saved (POST /v1/qr-codes/preview). */
export const previewCodeBody: JsonSchema = {
  ...objectSchema(
    'codes.preview.body',
    {
      slug: writable.slug,
      type: writable.type,
      destination: {
        ...writable.destination,
        description:
          'Needed where the symbol depends on it: a static type’s payload, a gs1 code’s Digital Link URI; ignored by the other types, whose symbol holds the public URL.',
      },
      domain_ulid: writable.domain_ulid,
      style_ulid: { ...writable.style_ulid, description: 'The style to draw with; absent or null: the default.' },
      format: { type: 'string', enum: ['svg', 'png'], description: 'svg (default: the SVG text) or png (base64).' },
      size: { type: 'integer', minimum: 64, maximum: 2048, description: 'Width in pixels (default 512).' },
    },
    ['slug', 'domain_ulid'],
  ),
  allOf: typedDestinations(false),
};
export interface PreviewCodeBody {
  slug: string;
  type?: string;
  destination?: unknown;
  domain_ulid: string;
  style_ulid?: string | null;
  format?: 'svg' | 'png';
  size?: number;
}
