// Paging of lists: the `limit` and `cursor` query properties every list accepts, the
// {data, meta: {next_cursor}} envelope, and the opaque keyset cursor.
import { ApiError } from '../errors.js';
import type { JsonSchema } from './validation.js';

export const MAX_PAGE = 1000;

/** Query properties shared by every list. */
export const pageQueryProperties: Record<string, JsonSchema> = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_PAGE,
    description: 'Page size. Omitted: every record is returned and meta.next_cursor is null.',
  },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 64,
    description: 'meta.next_cursor of the previous page (opaque).',
  },
};

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

/** {data: [items], meta: {next_cursor}} */
export function pagedEnvelope(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['data', 'meta'],
    properties: {
      data: { type: 'array', items: item },
      meta: {
        type: 'object',
        required: ['next_cursor'],
        properties: {
          next_cursor: {
            type: ['string', 'null'],
            description: 'Pass as `cursor` to get the next page; null on the last page or without `limit`.',
          },
        },
      },
    },
  };
}

const CURSOR_PREFIX = 'k1:';

export function encodeCursor(id: number): string {
  return Buffer.from(CURSOR_PREFIX + id).toString('base64url');
}

/** The id after which the page starts; a cursor we did not issue is a 422 on `cursor`. */
export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith(CURSOR_PREFIX) ? Number(text.slice(CURSOR_PREFIX.length)) : NaN;
  if (!Number.isSafeInteger(id) || id < 0 || encodeCursor(id) !== cursor) {
    throw ApiError.field('cursor', 'The cursor is invalid; use meta.next_cursor of the previous page.');
  }
  return id;
}
