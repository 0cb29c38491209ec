import { dateTime } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

export const PlanSummary: JsonSchema = {
  $id: 'PlanSummary',
  type: 'object',
  required: ['code', 'name'],
  properties: { code: { type: 'string' }, name: { type: 'string' } },
};

export const Organization: JsonSchema = {
  $id: 'Organization',
  type: 'object',
  required: ['ulid', 'name', 'slug', 'locale', 'currency'],
  properties: {
    ulid: { type: 'string' },
    name: { type: 'string' },
    slug: { type: 'string' },
    locale: { type: 'string' },
    currency: { type: 'string', description: 'ISO 4217 billing currency.' },
    plan: { oneOf: [PlanSummary, { type: 'null' }] },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

/** Organization slugs appear in public URLs (`/<org-slug>/<slug>`), so they are lowercase. */
export const ORG_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;
