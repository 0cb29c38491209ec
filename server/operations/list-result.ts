// Lists: every record by default (the spec), or pages with `limit` + an opaque keyset `cursor`.
// Without a limit a list is streamed batch by batch to callers that take streams (REST), so memory
// stays flat however many rows the organization has; the tool-call adapter needs a plain value and
// gets the array.
import { Readable } from 'node:stream';
import { decodeCursor, encodeCursor, type PageQuery } from '../schemas/paging.js';
import type { Call, OperationResult } from './operation.js';

const STREAM_BATCH = 500;

export interface ListSource<Row, Out> {
  /**
   * Up to `n` rows after the keyset position `afterId` (0: from the start), in the list's id order
   * (ascending, or descending for a newest-first list); the organization is bound by the caller.
   */
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
  if (!call.via.streams || first.length < STREAM_BATCH) {
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
