import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import { dateTime, nullableUlid, objectSchema, ulid } from '../schemas/common.js';
import { patterned, type JsonSchema } from '../schemas/validation.js';

export const QrStyle: JsonSchema = {
  $id: 'QrStyle',
  type: 'object',
  required: ['ulid', 'name', 'config'],
  properties: {
    ulid: { type: 'string' },
    name: { type: 'string' },
    config: {
      type: 'object',
      description: 'Style configuration for the designer and the render pipeline (free-form).',
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

const brandUlid: JsonSchema = {
  ...nullableUlid,
  description: 'A brand of the organization; null: no brand.',
};

const fields: Record<string, JsonSchema> = {
  name: { type: 'string', minLength: 1, maxLength: 255, ...patterned('\\S', 'Must not be blank.') },
  config: { type: 'object', description: 'Free-form style configuration; replaces the stored one.' },
  brand_ulid: brandUlid,
  is_preset: { type: 'boolean' },
};

export const createStyleBody = objectSchema('styles.create.body', fields, ['name', 'config']);
export const updateStyleBody = objectSchema('styles.update.body', fields);

export interface StyleInput {
  name?: string;
  config?: Record<string, unknown>;
  brand_ulid?: string | null;
  is_preset?: boolean;
}
export type CreateStyleBody = StyleInput & { name: string; config: Record<string, unknown> };

export const styleParams = objectSchema('styles.params', { style_ulid: ulid }, ['style_ulid']);
export interface StyleParams {
  style_ulid: string;
}

export const listStylesQuery = objectSchema('styles.list.query', {
  brand_ulid: { ...ulid, description: 'Only the styles of this brand.' },
  ...pageQueryProperties,
});
export type ListStylesQuery = PageQuery & { brand_ulid?: string };
