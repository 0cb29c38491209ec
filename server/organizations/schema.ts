import { dateTime, objectSchema } from '../schemas/common.js';
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
    pixel_consent: {
      type: 'string',
      enum: ['required', 'not_required'],
      description:
        'required (default): tracking pixels load only after the visitor accepts them on the pixel page; not_required: at once.',
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

/** Organization slugs appear in public URLs (`/<org-slug>/<slug>`), so they are lowercase. */
export const ORG_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/;

const PIXEL_CONSENT = ['required', 'not_required'] as const;
export type PixelConsent = (typeof PIXEL_CONSENT)[number];

export interface OrganizationSettings {
  pixel_consent?: PixelConsent;
}

export const updateOrganizationBody = objectSchema('organization.update.body', {
  pixel_consent: {
    type: 'string',
    enum: [...PIXEL_CONSENT],
    description:
      'required: pixels load only after the visitor accepts them (a consent banner in the page’s language); ' +
      'not_required: they load at once, for an organization with its own legal basis. See docs/pixels.md.',
  },
});
