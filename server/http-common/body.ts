// Reads a JSON request body with a size limit: 413 when too large, 400 when it is not JSON.
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { ApiError } from '../errors.js';

export async function readJsonBody(ctx: Koa.Context, limit: number): Promise<unknown> {
  const length = ctx.get('Content-Length');
  if (length && Number(length) > limit) throw ApiError.payloadTooLarge(limit);
  let raw: string;
  try {
    raw = await getRawBody(ctx.req, { limit, encoding: 'utf8', length: length || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw ApiError.payloadTooLarge(limit);
    throw ApiError.badRequest('The request body could not be read.');
  }
  if (raw.trim() === '') return undefined;
  const type = ctx.get('Content-Type');
  if (type && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) throw ApiError.unsupportedMediaType();
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw ApiError.invalidJson((err as Error).message);
  }
}
