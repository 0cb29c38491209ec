// Helpers of the redirect integration tests: raw HTTP with a Host header, and codes and domains
// written straight into Postgres (the REST resources are built separately).
import http from 'node:http';
import { ulid } from 'ulid';
import type { AppContext } from '../../server/context.js';

/** User agents of the three kinds of visitor the redirect tells apart, and the fallback origin's host. */
export const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
export const ANDROID =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36';
export const DESKTOP =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
export const FALLBACK = 'localhost:3001';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function hit(
  port: number,
  host: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        headers: { Host: host, ...opts.headers },
        agent: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

export async function fallbackDomainId(app: AppContext, host = 'localhost:3001'): Promise<number> {
  const row = await app.db('domains').where({ type: 'fallback' }).whereRaw('lower(host) = ?', [host]).first('id');
  return Number(row.id);
}

export async function insertCustomDomain(
  app: AppContext,
  orgId: number,
  host: string,
  over: { status?: string; settings?: Record<string, unknown> } = {},
): Promise<number> {
  const [row] = await app
    .db('domains')
    .insert({
      ulid: ulid(),
      org_id: orgId,
      host,
      type: 'custom',
      status: over.status ?? 'active',
      verified_at: over.status && over.status !== 'active' ? null : new Date(),
      settings: JSON.stringify(over.settings ?? {}),
    })
    .returning('id');
  return Number(row.id);
}

export interface CodeInput {
  orgId: number;
  orgSlug: string;
  domainId: number;
  slug: string;
  /** The code's type (default url). */
  type?: string;
  destination?: unknown;
  status?: string;
  brandId?: number | null;
  routing?: unknown;
  schedule?: unknown;
  password_hash?: string | null;
  redirect_cap?: number | null;
  date_begin?: Date | null;
  expire_at?: Date | null;
  utm_params?: unknown;
  prelander_enabled?: boolean;
  prelander_seconds?: number | null;
  prelander_message?: string | null;
}

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

export async function insertCode(app: AppContext, c: CodeInput): Promise<number> {
  const [row] = await app
    .db('qr_codes')
    .insert({
      ulid: ulid(),
      org_id: c.orgId,
      domain_id: c.domainId,
      brand_id: c.brandId ?? null,
      slug: `${c.orgSlug}/${c.slug}`,
      ...(c.type ? { type: c.type } : {}),
      status: c.status ?? 'active',
      destination: json(c.destination ?? 'https://example.com/landing'),
      routing: json(c.routing),
      schedule: json(c.schedule),
      password_hash: c.password_hash ?? null,
      redirect_cap: c.redirect_cap ?? null,
      date_begin: c.date_begin ?? null,
      expire_at: c.expire_at ?? null,
      utm_params: json(c.utm_params),
      prelander_enabled: c.prelander_enabled ?? false,
      prelander_seconds: c.prelander_seconds ?? null,
      prelander_message: c.prelander_message ?? null,
    })
    .returning('id');
  return Number(row.id);
}

export async function chRows<T>(app: AppContext, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await app.ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  return rs.json<T>();
}
