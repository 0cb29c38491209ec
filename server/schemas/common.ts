// Schema pieces shared by resources. Named resource schemas carry an $id; the OpenAPI generator
// lifts every $id'd schema into components and refers to it.
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { HTTP_URL_PATTERN, MAX_URL_LENGTH } from './http-url.js';
import { patterned, type JsonSchema } from './validation.js';

const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$';

const ULID_MESSAGE = 'Must be a ULID: 26 characters of 0-9 and A-Z except I, L, O and U.';

// maxLength beside the pattern: the pattern already says 26, the length is what resource limits
// (OWASP API4) and generated clients read.
export const ulid: JsonSchema = {
  type: 'string',
  maxLength: 26,
  ...patterned(ULID_PATTERN, ULID_MESSAGE),
  description: 'A ULID.',
};
/** A ULID or null (clears a reference). */
export const nullableUlid: JsonSchema = {
  type: ['string', 'null'],
  maxLength: 26,
  ...patterned(ULID_PATTERN, ULID_MESSAGE),
};

/**
 * An http or https URL field: the schema's gate (length, scheme); the full rule and the normalised
 * form are server/schemas/http-url.ts's, applied by the services.
 */
export const httpUrl: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  ...patterned(HTTP_URL_PATTERN, 'Must be an http or https URL.'),
  description:
    `An http or https URL of at most ${MAX_URL_LENGTH} characters, without control characters, spaces or ` +
    'credentials. Stored and served normalised: host in punycode, path and query percent-encoded.',
};
/** The longest RFC 3339 date-time accepted: nanoseconds and an offset take 35 characters. */
const MAX_DATE_TIME_LENGTH = 40;
export const dateTime: JsonSchema = { type: 'string', format: 'date-time', maxLength: MAX_DATE_TIME_LENGTH };
export const nullableDateTime: JsonSchema = {
  type: ['string', 'null'],
  format: 'date-time',
  maxLength: MAX_DATE_TIME_LENGTH,
};

/** A query or path object schema; properties arrive as strings and are coerced. */
export function objectSchema(id: string, properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { $id: id, type: 'object', properties, required, additionalProperties: false };
}

export const ErrorBody: JsonSchema = {
  $id: 'Error',
  type: 'object',
  required: ['message', 'code'],
  properties: {
    message: { type: 'string' },
    code: {
      type: 'string',
      // A closed set, so typed clients can switch on it; a 429 has its own body (RateLimited).
      enum: (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => c !== 'rate_limited'),
    },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    required_ability: { type: 'string' },
    feature: { type: 'string' },
    reasons: {
      type: 'array',
      items: { type: 'string' },
      description: 'style_not_scannable: the reason codes (docs/rendering.md).',
    },
    scannability: { type: 'object', description: 'style_not_scannable: the full measurement.' },
    request_id: { type: 'string' },
  },
};

/** The 429 body: the error shape (code rate_limited) plus when to retry and where limits are explained. */
export const RateLimitedBody: JsonSchema = {
  $id: 'RateLimited',
  type: 'object',
  required: ['message', 'code', 'retry_after', 'documentation'],
  properties: {
    message: { type: 'string' },
    code: { type: 'string', const: 'rate_limited' },
    retry_after: { type: 'integer', minimum: 0, description: 'Seconds until the window resets (as Retry-After).' },
    documentation: { type: 'string', format: 'uri', description: 'The rate-limit help page.' },
  },
};

export function dataEnvelope(schema: JsonSchema): JsonSchema {
  return { type: 'object', required: ['data'], properties: { data: schema } };
}

export function listEnvelope(schema: JsonSchema): JsonSchema {
  return { type: 'object', required: ['data'], properties: { data: { type: 'array', items: schema } } };
}
