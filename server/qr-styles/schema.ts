import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { dateTime, nullableUlid, objectSchema, ulid } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';
import { StyleConfigSchema, type StyleConfig } from '../rendering/style.js';

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
