// Reads a JSON or form request body with a size limit: 413 when too large, 400 when it cannot be
// read, 415 when it is of another type.
import type Koa from 'koa';
import getRawBody from 'raw-body';
import { ApiError } from '../errors.js';

async function readRaw(ctx: Koa.Context, limit: number): Promise<string> {
  const length = ctx.get('Content-Length');
  if (length && Number(length) > limit) throw ApiError.payloadTooLarge(limit);
  try {
    return await getRawBody(ctx.req, { limit, encoding: 'utf8', length: length || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw ApiError.payloadTooLarge(limit);
    throw ApiError.badRequest('The request body could not be read.');
  }
}

/** An application/x-www-form-urlencoded body (a form a page posts). */
export async function readFormBody(ctx: Koa.Context, limit: number): Promise<URLSearchParams> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(ctx.get('Content-Type'))) throw ApiError.unsupportedMediaType();
  return new URLSearchParams(await readRaw(ctx, limit));
}

export async function readJsonBody(ctx: Koa.Context, limit: number): Promise<unknown> {
  const raw = await readRaw(ctx, limit);
  if (raw.trim() === '') return undefined;
  const type = ctx.get('Content-Type');
  if (type && !/^application\/([a-z.+-]*\+)?json\b/i.test(type)) throw ApiError.unsupportedMediaType();
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw ApiError.invalidJson((err as Error).message);
  }
}
