import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { dateTime, nullableUlid, objectSchema, ulid } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';
import { trackingPixelsOut, TrackingPixels, type TrackingPixel } from '../qr-codes/pixels.js';

const BRAND_SLUG_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export const Brand: JsonSchema = {
  $id: 'Brand',
  type: 'object',
  required: ['ulid', 'name', 'slug'],
  properties: {
    ulid: { type: 'string' },
    name: { type: 'string' },
    slug: {
      type: 'string',
      description: 'alpha_dash: letters, digits, _ and -; unique per organization, case-insensitively.',
    },
    brand_kit: { type: 'object', description: 'Free-form brand kit (colours, logos, fonts).' },
    settings: { type: 'object', description: 'Free-form brand settings.' },
    tracking_pixels: trackingPixelsOut(
      'The default pixels of the brand’s codes that set none of their own; null: none.',
    ),
    primary_domain: {
      oneOf: [
        {
          type: 'object',
          required: ['ulid', 'host'],
          properties: { ulid: { type: 'string' }, host: { type: 'string' } },
        },
        { type: 'null' },
      ],
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

const fields: Record<string, JsonSchema> = {
  name: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    ...patterned('\\S', 'Must not be blank.'),
    description: 'Display name.',
  },
  slug: {
    type: 'string',
    maxLength: 64,
    ...patterned(BRAND_SLUG_PATTERN, 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.'),
    description: '1 to 64 of A-Z, a-z, 0-9, _ and -. Omitted on creation: derived from the name.',
  },
  brand_kit: { type: 'object', description: 'Free-form object; replaces the stored one.' },
  settings: {
    type: 'object',
    properties: {
      scan_alerts: {
        type: 'boolean',
        description:
          'true: scan anomaly webhook events for the brand’s codes (a code’s own settings.scan_alerts wins).',
      },
    },
    description:
      'Free-form object; replaces the stored one. A key named url or ending in _url (at any depth) must ' +
      'hold an http or https URL (or null); it is stored normalised.',
  },
  tracking_pixels: {
    ...TrackingPixels,
    description: `The default pixels of the brand’s codes whose own tracking_pixels is null. ${String(TrackingPixels.description)}`,
  },
  primary_domain_ulid: {
    ...nullableUlid,
    description: 'A custom domain of the organization or a shared fallback host; null: none.',
  },
};

export const createBrandBody = objectSchema('brands.create.body', fields, ['name']);
export const updateBrandBody = objectSchema('brands.update.body', fields);

export interface BrandInput {
  name?: string;
  slug?: string;
  brand_kit?: Record<string, unknown>;
  settings?: Record<string, unknown>;
  tracking_pixels?: TrackingPixel[] | null;
  primary_domain_ulid?: string | null;
}
export type CreateBrandBody = BrandInput & { name: string };

export const brandParams = objectSchema('brands.params', { brand_ulid: ulid }, ['brand_ulid']);
export interface BrandParams {
  brand_ulid: string;
}

export const listBrandsQuery = objectSchema('brands.list.query', { ...pageQueryProperties });
export type ListBrandsQuery = PageQuery;
