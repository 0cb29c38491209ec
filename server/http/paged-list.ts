// Lists: every record by default (the spec), or pages with `limit` + an opaque keyset `cursor`.
// Without a limit a REST list is streamed batch by batch, so memory stays flat however many rows
// the organization has; the tool-call adapter needs a plain value and gets the array.
import { Readable } from 'node:stream';
import { ApiError } from '../errors.js';
import type { JsonSchema } from '../schemas/validation.js';
import type { Call, OperationResult } from './operation.js';

export const MAX_PAGE = 1000;
const STREAM_BATCH = 500;

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

export interface ListSource<Row, Out> {
  /** Up to `n` rows with id > afterId, in id order; the organization is bound by the caller. */
  fetch(afterId: number, n: number): Promise<Row[]>;
  id(row: Row): number;
  render(row: Row): Out;
}

export async function listResult<Row, Out>(
  call: Call,
  query: PageQuery,
  source: ListSource<Row, Out>,
): Promise<OperationResult> {
  const after = decodeCursor(query.cursor);
  if (query.limit !== undefined) {
    const rows = await source.fetch(after, query.limit + 1);
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    return {
      status: 200,
      body: {
        data: page.map((r) => source.render(r)),
        meta: { next_cursor: more ? encodeCursor(source.id(page[page.length - 1])) : null },
      },
    };
  }
  // The first batch is read before answering, so a failing query is still a proper error response.
  const first = await source.fetch(after, STREAM_BATCH);
  if (call.via !== 'rest' || first.length < STREAM_BATCH) {
    const all = first.map((r) => source.render(r));
    let last = first;
    while (last.length === STREAM_BATCH) {
      last = await source.fetch(source.id(last[last.length - 1]), STREAM_BATCH);
      for (const r of last) all.push(source.render(r));
    }
    return { status: 200, body: { data: all, meta: { next_cursor: null } } };
  }
  async function* chunks(): AsyncGenerator<string> {
    yield '{"data":[';
    let batch = first;
    let sep = '';
    while (batch.length) {
      yield sep + batch.map((r) => JSON.stringify(source.render(r))).join(',');
      sep = ',';
      if (batch.length < STREAM_BATCH) break;
      batch = await source.fetch(source.id(batch[batch.length - 1]), STREAM_BATCH);
    }
    yield '],"meta":{"next_cursor":null}}';
  }
  return { status: 200, body: Readable.from(chunks()), contentType: 'application/json; charset=utf-8' };
}
