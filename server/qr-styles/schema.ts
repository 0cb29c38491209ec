import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { dateTime, nullableUlid, objectSchema, ulid } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';
import { StyleConfigSchema, type StyleConfig } from '../rendering/style.js';
import { CAPTURES } from '../rendering/captures.js';
import { DECODER_FAMILIES } from '../rendering/decoders.js';
import { REASONS } from '../rendering/scannability.js';

const reasonCodes = Object.keys(REASONS);

const Scannability: JsonSchema = {
  $id: 'Scannability',
  type: 'object',
  description: 'How well the style scans, measured on a rendered symbol (docs/rendering.md#scannability).',
  required: [
    'verdict',
    'decoded',
    'contrast_ratio',
    'quiet_zone_modules',
    'logo_coverage',
    'error_correction',
    'reasons',
  ],
  properties: {
    verdict: { type: 'string', enum: ['pass', 'warn', 'fail'] },
    decoded: { type: 'boolean', description: 'Whether the rendered raster decoded to the encoded text.' },
    contrast_ratio: { type: 'number', description: 'Worst foreground/background contrast (WCAG formula), e.g. 21.' },
    quiet_zone_modules: { type: 'number' },
    logo_coverage: { type: 'number', description: 'Share of the symbol’s modules the logo hides, 0 to 1.' },
    logo_area: {
      type: 'number',
      description:
        'Share of the symbol’s area the drawn logo takes, 0 to 1 (absent from checks stored before it was measured).',
    },
    error_correction: { type: 'string', enum: ['L', 'M', 'Q', 'H'] },
    reasons: { type: 'array', items: { type: 'string', enum: reasonCodes } },
    check: {
      type: 'string',
      enum: ['quick', 'full'],
      description:
        'quick: a live preview’s check (no captures); full: the whole verdict. Absent on checks stored before it.',
    },
    decoders: {
      type: 'array',
      items: { type: 'string', enum: [...DECODER_FAMILIES] },
      description: 'The decoder families asked: zxing-cpp, jsqr and (full) zbar.',
    },
    misses: {
      type: 'array',
      description: 'Full check: which decoder family did not read which image (ideal: the full-size one).',
      items: {
        type: 'object',
        required: ['family', 'capture'],
        properties: {
          family: { type: 'string', enum: [...DECODER_FAMILIES] },
          capture: { type: 'string', enum: ['ideal', ...CAPTURES] },
        },
      },
    },
    print: {
      type: 'object',
      description: 'The print hint the captures imitate: symbol side and scanning distance, in mm.',
      properties: { size_mm: { type: 'number' }, distance_mm: { type: 'number' } },
    },
    robustness_margin: {
      type: ['number', 'null'],
      description:
        'Full check: the declared print size over the smallest size that still passes (2: passes at half the size; under 1: print it larger); null when not even twice the declared size passes.',
    },
    smallest_print_size_mm: {
      type: ['number', 'null'],
      description:
        'Full check: the smallest symbol side (mm) at which every decoder family reads every capture at the declared distance.',
    },
  },
};

export const QrStyle: JsonSchema = {
  $id: 'QrStyle',
  type: 'object',
  required: ['ulid', 'name', 'config'],
  properties: {
    ulid: { type: 'string' },
    name: { type: 'string' },
    config: {
      type: 'object',
      description:
        'Style configuration: the QrStyleConfig schema of the create and update bodies (qr-code-styling’s option ' +
        'names plus frame). A style stored before that schema may not fit it until corrected (qrctl styles-check).',
    },
    is_preset: { type: 'boolean' },
    scannability: {
      oneOf: [Scannability, { type: 'null' }],
      description:
        'The last scannability check (on create and on every change of config or brand); null for a style stored before the check.',
    },
    brand: {
      oneOf: [
        {
          type: 'object',
          required: ['ulid', 'name'],
          properties: { ulid: { type: 'string' }, name: { type: 'string' } },
        },
        { type: 'null' },
      ],
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

// Inlined without its $id: one ajv instance compiles both bodies, and an $id may be added only once.
const { $id: _configId, ...configSchema } = StyleConfigSchema;

const brandUlid: JsonSchema = {
  ...nullableUlid,
  description: 'A brand of the organization; null: no brand.',
};

const fields: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 255, ...patterned('\\S', 'Must not be blank.') },
  config: { ...configSchema, description: 'The style configuration; replaces the stored one. See docs/rendering.md.' },
  brand_ulid: brandUlid,
  is_preset: { type: 'boolean' },
};

export const createStyleBody = objectSchema('styles.create.body', fields, ['name', 'config']);
export const updateStyleBody = objectSchema('styles.update.body', fields);

export interface StyleInput {
  name?: string;
  config?: StyleConfig;
  brand_ulid?: string | null;
  is_preset?: boolean;
}
export type CreateStyleBody = StyleInput & { name: string; config: StyleConfig };

export const styleParams = objectSchema('styles.params', { style_ulid: ulid }, ['style_ulid']);
export interface StyleParams {
  style_ulid: string;
}

export const listStylesQuery = objectSchema('styles.list.query', {
  brand_ulid: { ...ulid, description: 'Only the styles of this brand.' },
  ...pageQueryProperties,
});
export type ListStylesQuery = PageQuery & { brand_ulid?: string };

export const previewStyleBody = objectSchema(
  'styles.preview.body',
  {
    config: { ...configSchema, description: 'The style configuration to draw and judge.' },
    format: { type: 'string', enum: ['svg', 'png'], description: 'svg (default: the SVG text) or png (base64).' },
    size: { type: 'integer', minimum: 64, maximum: 2048, description: 'Width in pixels (default 512).' },
    brand_ulid: { ...ulid, description: 'The brand whose kit answers brand:... references.' },
    text: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'The text to encode (default: a sample as long as a typical public_url).',
    },
    check: {
      type: 'string',
      enum: ['full', 'quick'],
      description:
        'full (default): the whole verdict, every decoder family on phone-like captures; quick: contrast, quiet zone, logo and the ideal image, for a live preview while the user edits.',
    },
  },
  ['config'],
);
export interface PreviewStyleBody {
  config: StyleConfig;
  format?: 'svg' | 'png';
  size?: number;
  brand_ulid?: string;
  text?: string;
  check?: 'full' | 'quick';
}

export const StylePreview: JsonSchema = {
  $id: 'StylePreview',
  type: 'object',
  required: ['image', 'format', 'content_type', 'scannability'],
  properties: {
    image: { type: 'string', description: 'The SVG text, or the PNG in base64.' },
    format: { type: 'string', enum: ['svg', 'png'] },
    content_type: { type: 'string', enum: ['image/svg+xml', 'image/png'] },
    scannability: Scannability,
  },
};
