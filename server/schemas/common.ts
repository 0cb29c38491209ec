// Schema pieces shared by resources. Named resource schemas carry an $id; the OpenAPI generator
// lifts every $id'd schema into components and refers to it.
import type { JsonSchema } from './validation.js';

export const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{26}$';

export const ulid: JsonSchema = { type: 'string', pattern: ULID_PATTERN, description: 'A ULID.' };
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const nullableDateTime: JsonSchema = { type: ['string', 'null'], format: 'date-time' };

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
    code: { type: 'string' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    required_ability: { type: 'string' },
    feature: { type: 'string' },
    request_id: { type: 'string' },
  },
};

export const RateLimitedBody: JsonSchema = {
  $id: 'RateLimited',
  type: 'object',
  required: ['message', 'retry_after', 'documentation'],
  properties: {
    message: { type: 'string' },
    retry_after: { type: 'integer' },
    documentation: { type: 'string', format: 'uri' },
  },
};

export function dataEnvelope(schema: JsonSchema): JsonSchema {
  return { type: 'object', required: ['data'], properties: { data: schema } };
}

export function listEnvelope(schema: JsonSchema): JsonSchema {
  return { type: 'object', required: ['data'], properties: { data: { type: 'array', items: schema } } };
}
