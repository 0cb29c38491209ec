// The business rules of QR codes, shared by the REST routes, the MCP tools and the bulk-import
// worker: validation beyond the schema, plan gating, references to domains, brands and styles,
// slug uniqueness, and the payload. Writes that span several codes are all-or-nothing.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import { requireFeature, type Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, sqlState, UNIQUE_VIOLATION, type FieldErrors } from '../errors.js';
import { hashPassword } from '../redirect/password.js';
import { toFieldErrors } from '../schemas/validation.js';
import {
  findCode,
  findCodes,
  insertCodes,
  pageCodes,
  resolveRefs,
  softDeleteCode,
  takenSlugs,
  updateCodeRow,
  updateStatuses,
  type CodeRow,
  type CodeUpdate,
  type NewCodeRow,
  type Refs,
} from './repository.js';
import { createCodeBody, type CodeStatus, type CodeWrite } from './schema.js';
import {
  addError,
  checkDates,
  checkDateValue,
  checkDestination,
  checkRouting,
  checkSchedule,
  slugKey,
  slugProblem,
} from './validate.js';

type Db = Knex | Knex.Transaction;

export interface OrgRef {
  id: number;
  slug: string;
}

// ---------------------------------------------------------------------------------------------
// The payload.

export interface QrCodePayload {
  ulid: string;
  name: string | null;
  slug: string;
  type: string;
  status: string;
  public_url: string;
  destination: unknown;
  routing: Record<string, unknown> | null;
  schedule: Record<string, unknown> | null;
  password: boolean;
  redirects_count: number;
  brand: { ulid: string; name: string } | null;
  domain: { ulid: string; host: string };
  style: { ulid: string; name: string } | null;
  date_begin: string | null;
  expire_at: string | null;
  redirect_cap: number | null;
  utm_params: Record<string, string> | null;
  device_routing: Record<string, unknown> | null;
  language_routing: Record<string, unknown> | null;
  tracking_pixels: unknown[] | null;
  custom_js: null;
  landing_config: Record<string, unknown> | null;
  prelander_enabled: boolean;
  prelander_seconds: number | null;
  prelander_message: string | null;
  created_at: string;
  updated_at: string;
}

/** Fallback origin: `<origin>/<org-slug>/<slug>`; custom domain: `https://<host>/<slug>`. */
export function publicUrl(domain: { type: string; host: string; origin: string | null }, storedSlug: string): string {
  if (domain.type === 'fallback')
    return `${(domain.origin ?? `http://${domain.host}`).replace(/\/+$/, '')}/${storedSlug}`;
  return `https://${domain.host}/${storedSlug.slice(storedSlug.indexOf('/') + 1)}`;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function codePayload(r: CodeRow): QrCodePayload {
  return {
    ulid: r.ulid,
    name: r.name,
    slug: r.slug,
    type: 'url',
    status: r.status,
    public_url: publicUrl({ type: r.domain_type, host: r.domain_host, origin: r.domain_origin }, r.slug),
    destination: r.destination,
    routing: r.routing,
    schedule: r.schedule,
    password: r.has_password,
    redirects_count: Number(r.redirects_count),
    brand: r.brand_ulid ? { ulid: r.brand_ulid, name: r.brand_name ?? '' } : null,
    domain: { ulid: r.domain_ulid, host: r.domain_host },
    style: r.style_ulid ? { ulid: r.style_ulid, name: r.style_name ?? '' } : null,
    date_begin: iso(r.date_begin),
    expire_at: iso(r.expire_at),
    redirect_cap: r.redirect_cap,
    utm_params: r.utm_params,
    device_routing: r.device_routing,
    language_routing: r.language_routing,
    tracking_pixels: r.tracking_pixels,
    custom_js: null,
    landing_config: r.landing_config,
    prelander_enabled: r.prelander_enabled,
    prelander_seconds: r.prelander_seconds,
    prelander_message: r.prelander_message,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Validation of new codes, in batches (one query per kind of reference, one for slugs).

/** Plan features a write uses: a gated key with a non-null value. Null clears and is always allowed. */
export function gatedFeatures(input: CodeWrite): string[] {
  const out: string[] = [];
  for (const key of ['redirect_cap', 'routing', 'schedule', 'password'] as const) {
    if (input[key] !== undefined && input[key] !== null) out.push(key);
  }
  return out;
}

export function requireCodeFeatures(principal: Principal, input: CodeWrite): void {
  for (const f of gatedFeatures(input)) requireFeature(principal, f);
}

const json = (v: unknown): string | null => (v === undefined || v === null ? null : JSON.stringify(v));
const date = (v: string | null | undefined): Date | null => (v ? new Date(v) : null);

/** Schema errors of one input, with our plainer messages for slug and destination. */
function schemaErrors(app: AppContext, input: unknown): FieldErrors {
  const errors: FieldErrors = {};
  const fn = app.validators.compile(createCodeBody, 'body');
  if (fn(input)) return errors;
  const own: FieldErrors = {};
  const obj = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (typeof obj.slug === 'string') {
    const p = slugProblem(obj.slug);
    if (p) addError(own, 'slug', p);
  }
  if (obj.destination !== undefined) checkDestination(own, obj.destination);
  for (const [field, msgs] of Object.entries(toFieldErrors(fn.errors ?? []))) {
    if (field === 'slug' && own.slug) continue;
    if (field.startsWith('destination') && Object.keys(own).some((k) => k.startsWith('destination'))) continue;
    for (const m of msgs) addError(errors, field, m);
  }
  for (const [field, msgs] of Object.entries(own)) for (const m of msgs) addError(errors, field, m);
  return errors;
}

export interface PreparedCodes {
  /** Per input: its field errors, or null when it is valid. */
  errors: (FieldErrors | null)[];
  /** Per input: the row to insert, or null when invalid. */
  rows: (NewCodeRow | null)[];
  refs: Refs;
}

/**
 * Validates new codes like POST /v1/qr-codes does (schema, URLs, routing, schedule, dates,
 * references owned by the organization, slugs free and not repeated in the batch) and builds
 * their rows. Plan gating is the caller's (it needs the principal). Later duplicates of a slug in
 * the same batch are the invalid ones.
 */
export async function prepareNewCodes(
  app: AppContext,
  db: Db,
  org: OrgRef,
  inputs: CodeWrite[],
): Promise<PreparedCodes> {
  const now = app.clock.now();
  // Values Postgres cannot store were refused at the boundary (validateInput).
  const errors: FieldErrors[] = inputs.map((input) => schemaErrors(app, input));
  inputs.forEach((input, i) => {
    if (Object.keys(errors[i]).length) return;
    checkDestination(errors[i], input.destination);
    checkDateValue(errors[i], 'date_begin', input.date_begin);
    checkDateValue(errors[i], 'expire_at', input.expire_at);
    if (Object.keys(errors[i]).length) return;
    checkRouting(errors[i], input.routing as Parameters<typeof checkRouting>[1]);
    checkSchedule(errors[i], input.schedule as Parameters<typeof checkSchedule>[1]);
    checkDates(errors[i], date(input.date_begin), date(input.expire_at));
  });
  const ok = (i: number) => !Object.keys(errors[i]).length;
  const idx = inputs.map((_, i) => i).filter(ok);
  const refs = await resolveRefs(db, org.id, {
    domains: idx.map((i) => inputs[i].domain_ulid!),
    brands: idx.map((i) => inputs[i].brand_ulid).filter((u): u is string => !!u),
    styles: idx.map((i) => inputs[i].style_ulid).filter((u): u is string => !!u),
  });
  const firstOf = new Map<string, number>();
  for (const i of idx) {
    const input = inputs[i];
    if (!refs.domains.has(input.domain_ulid!))
      addError(errors[i], 'domain_ulid', 'No such domain in this organization.');
    if (input.brand_ulid && !refs.brands.has(input.brand_ulid))
      addError(errors[i], 'brand_ulid', 'No such brand in this organization.');
    if (input.style_ulid && !refs.styles.has(input.style_ulid))
      addError(errors[i], 'style_ulid', 'No such style in this organization.');
    const key = slugKey(org.slug, input.slug!);
    const first = firstOf.get(key);
    if (first !== undefined) addError(errors[i], 'slug', `Repeats the slug of entry ${first}.`);
    else firstOf.set(key, i);
  }
  const taken = await takenSlugs(db, org.id, [...firstOf.keys()]);
  for (const i of idx) {
    if (taken.has(slugKey(org.slug, inputs[i].slug!))) addError(errors[i], 'slug', 'The slug has already been taken.');
  }
  const rows: (NewCodeRow | null)[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const input = inputs[i];
    if (!ok(i)) {
      rows.push(null);
      continue;
    }
    rows.push({
      ulid: newUlid(),
      org_id: org.id,
      brand_id: input.brand_ulid ? refs.brands.get(input.brand_ulid)!.id : null,
      domain_id: refs.domains.get(input.domain_ulid!)!.id,
      style_id: input.style_ulid ? refs.styles.get(input.style_ulid)!.id : null,
      name: input.name ?? null,
      slug: `${org.slug}/${input.slug!}`,
      type: 'url',
      status: input.status ?? 'active',
      destination: JSON.stringify(input.destination),
      routing: json(input.routing),
      schedule: json(input.schedule),
      password_hash: input.password ? await hashPassword(input.password) : null,
      redirect_cap: input.redirect_cap ?? null,
      date_begin: date(input.date_begin),
      expire_at: date(input.expire_at),
      utm_params: json(input.utm_params),
      prelander_enabled: input.prelander_enabled ?? false,
      prelander_seconds: input.prelander_seconds ?? null,
      prelander_message: input.prelander_message ?? null,
      created_at: now,
      updated_at: now,
    });
  }
  return { errors: errors.map((e, i) => (ok(i) ? null : e)), rows, refs };
}

// ---------------------------------------------------------------------------------------------
// Services for REST and MCP.

export interface CreateOptions {
  /** Run inside the caller's transaction (MCP tools that do more in the same unit). */
  trx?: Knex.Transaction;
  /** Validate and preview without writing. */
  dryRun?: boolean;
  /** Field prefix of errors when several codes are created, e.g. `rows` → `rows.3.slug`. */
  fieldPrefix?: string;
}

export interface CodePreview {
  slug: string;
  public_url: string;
  destination: unknown;
  status: string;
  name: string | null;
  domain: { ulid: string; host: string };
}

function prefixed(all: (FieldErrors | null)[], prefix: string | null): FieldErrors {
  const out: FieldErrors = {};
  all.forEach((errs, i) => {
    for (const [field, msgs] of Object.entries(errs ?? {}))
      out[prefix === null ? field : `${prefix}.${i}.${field}`] = msgs;
  });
  return out;
}

async function inTransaction<T>(
  app: AppContext,
  trx: Knex.Transaction | undefined,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return trx ? fn(trx) : app.db.transaction(fn);
}

/**
 * Creates codes all-or-nothing: any invalid input fails the whole call with 422 (fields prefixed
 * `<fieldPrefix>.<index>.` when there are several), a plan-gated field without the feature with 403.
 */
export async function createCodes(
  app: AppContext,
  principal: Principal,
  inputs: CodeWrite[],
  opts: { trx?: Knex.Transaction; fieldPrefix?: string } = {},
): Promise<QrCodePayload[]> {
  const result = await createOrPreview(app, principal, inputs, { ...opts, dryRun: false });
  return result as QrCodePayload[];
}

/** What createCodes would create; throws exactly the errors createCodes would. Writes nothing. */
export async function previewCreateCodes(
  app: AppContext,
  principal: Principal,
  inputs: CodeWrite[],
  opts: { fieldPrefix?: string } = {},
): Promise<CodePreview[]> {
  const result = await createOrPreview(app, principal, inputs, { ...opts, dryRun: true });
  return result as CodePreview[];
}

async function createOrPreview(
  app: AppContext,
  principal: Principal,
  inputs: CodeWrite[],
  opts: CreateOptions,
): Promise<QrCodePayload[] | CodePreview[]> {
  for (const input of inputs) requireCodeFeatures(principal, input);
  const org = { id: principal.org.id, slug: principal.org.slug };
  const prefix = inputs.length === 1 && opts.fieldPrefix === undefined ? null : (opts.fieldPrefix ?? 'codes');
  return inTransaction(app, opts.dryRun ? undefined : opts.trx, async (trx) => {
    const prepared = await prepareNewCodes(app, opts.dryRun ? app.db : trx, org, inputs);
    const errors = prefixed(prepared.errors, prefix);
    if (Object.keys(errors).length) throw ApiError.validation(errors);
    const rows = prepared.rows as NewCodeRow[];
    if (opts.dryRun) {
      return rows.map((r, i): CodePreview => {
        const d = prepared.refs.domains.get(inputs[i].domain_ulid!)!;
        return {
          slug: r.slug,
          public_url: publicUrl(d, r.slug),
          destination: inputs[i].destination,
          status: r.status,
          name: r.name,
          domain: { ulid: d.ulid, host: d.host },
        };
      });
    }
    const ids = await insertCodes(trx, rows);
    const lost = rows.findIndex((r) => !ids.has(r.slug.toLowerCase()));
    // Taken between the check and the insert by a concurrent request: the same 422.
    if (lost !== -1)
      throw ApiError.validation(
        prefixed(
          inputs.map((_, i) => (i === lost ? { slug: ['The slug has already been taken.'] } : null)),
          prefix,
        ),
      );
    const created = await findCodes(
      trx,
      org.id,
      rows.map((r) => r.ulid),
    );
    const byUlid = new Map(created.map((c) => [c.ulid, c]));
    return rows.map((r) => codePayload(byUlid.get(r.ulid)!));
  });
}

export async function readCode(app: AppContext, principal: Principal, codeUlid: string): Promise<QrCodePayload> {
  const row = await findCode(app.db, principal.org.id, codeUlid);
  if (!row) throw ApiError.notFound('QR code');
  return codePayload(row);
}

/** Rows for the list endpoint: up to n codes after the keyset position. */
export function listCodeRows(app: AppContext, principal: Principal, afterId: number, n: number): Promise<CodeRow[]> {
  return pageCodes(app.db, principal.org.id, afterId, n);
}

/** PATCH: only the keys given change; null clears a nullable key. */
export async function updateCode(
  app: AppContext,
  principal: Principal,
  codeUlid: string,
  patch: CodeWrite,
  opts: { trx?: Knex.Transaction } = {},
): Promise<QrCodePayload> {
  requireCodeFeatures(principal, patch);
  const orgId = principal.org.id;
  return inTransaction(app, opts.trx, async (trx) => {
    const current = await findCode(trx, orgId, codeUlid);
    if (!current) throw ApiError.notFound('QR code');
    const errors: FieldErrors = {};
    if (patch.destination !== undefined) checkDestination(errors, patch.destination);
    checkDateValue(errors, 'date_begin', patch.date_begin);
    checkDateValue(errors, 'expire_at', patch.expire_at);
    if (Object.keys(errors).length) throw ApiError.validation(errors);
    checkRouting(errors, patch.routing as Parameters<typeof checkRouting>[1]);
    checkSchedule(errors, patch.schedule as Parameters<typeof checkSchedule>[1]);
    const begin = patch.date_begin !== undefined ? date(patch.date_begin) : current.date_begin;
    const expire = patch.expire_at !== undefined ? date(patch.expire_at) : current.expire_at;
    checkDates(errors, begin, expire);
    const refs = await resolveRefs(trx, orgId, {
      domains: patch.domain_ulid ? [patch.domain_ulid] : [],
      brands: patch.brand_ulid ? [patch.brand_ulid] : [],
      styles: patch.style_ulid ? [patch.style_ulid] : [],
    });
    if (patch.domain_ulid && !refs.domains.has(patch.domain_ulid))
      addError(errors, 'domain_ulid', 'No such domain in this organization.');
    if (patch.brand_ulid && !refs.brands.has(patch.brand_ulid))
      addError(errors, 'brand_ulid', 'No such brand in this organization.');
    if (patch.style_ulid && !refs.styles.has(patch.style_ulid))
      addError(errors, 'style_ulid', 'No such style in this organization.');
    const slug = patch.slug !== undefined ? `${principal.org.slug}/${patch.slug}` : undefined;
    if (slug && (await takenSlugs(trx, orgId, [slug.toLowerCase()], current.id)).size)
      addError(errors, 'slug', 'The slug has already been taken.');
    if (Object.keys(errors).length) throw ApiError.validation(errors);

    const set: CodeUpdate = { updated_at: app.clock.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (slug !== undefined) set.slug = slug;
    if (patch.destination !== undefined) set.destination = JSON.stringify(patch.destination);
    if (patch.type !== undefined) set.type = 'url';
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.domain_ulid !== undefined) set.domain_id = refs.domains.get(patch.domain_ulid)!.id;
    if (patch.brand_ulid !== undefined) set.brand_id = patch.brand_ulid ? refs.brands.get(patch.brand_ulid)!.id : null;
    if (patch.style_ulid !== undefined) set.style_id = patch.style_ulid ? refs.styles.get(patch.style_ulid)!.id : null;
    if (patch.redirect_cap !== undefined) set.redirect_cap = patch.redirect_cap;
    if (patch.password !== undefined) set.password_hash = patch.password ? await hashPassword(patch.password) : null;
    if (patch.routing !== undefined) set.routing = json(patch.routing);
    if (patch.schedule !== undefined) set.schedule = json(patch.schedule);
    if (patch.date_begin !== undefined) set.date_begin = begin;
    if (patch.expire_at !== undefined) set.expire_at = expire;
    if (patch.utm_params !== undefined) set.utm_params = json(patch.utm_params);
    if (patch.prelander_enabled !== undefined) set.prelander_enabled = patch.prelander_enabled;
    if (patch.prelander_seconds !== undefined) set.prelander_seconds = patch.prelander_seconds;
    if (patch.prelander_message !== undefined) set.prelander_message = patch.prelander_message;
    try {
      await trx.transaction(async (sp) => {
        await updateCodeRow(sp, orgId, current.id, set);
      });
    } catch (err) {
      if (sqlState(err) === UNIQUE_VIOLATION) throw ApiError.field('slug', 'The slug has already been taken.');
      throw err;
    }
    return codePayload((await findCode(trx, orgId, codeUlid))!);
  });
}

export interface StatusChangePreview {
  status: CodeStatus;
  /** Codes whose status would change. */
  changing: number;
  codes: { ulid: string; slug: string; status_before: string; status_after: CodeStatus }[];
}

async function codesOrNotFound(db: Db, orgId: number, ulids: string[]): Promise<CodeRow[]> {
  const unique = [...new Set(ulids.map((u) => u.toUpperCase()))];
  const rows = await findCodes(db, orgId, unique);
  if (rows.length !== unique.length) {
    const found = new Set(rows.map((r) => r.ulid));
    const missing = unique.filter((u) => !found.has(u));
    throw new ApiError(
      'not_found',
      `No such QR code in this organization: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', …' : ''}.`,
    );
  }
  return rows;
}

/** What updateCodesStatus would do; 404 when any ULID is not a live code of the organization. */
export async function previewCodesStatus(
  app: AppContext,
  principal: Principal,
  codeUlids: string[],
  status: CodeStatus,
): Promise<StatusChangePreview> {
  const rows = await codesOrNotFound(app.db, principal.org.id, codeUlids);
  return {
    status,
    changing: rows.filter((r) => r.status !== status).length,
    codes: rows.map((r) => ({ ulid: r.ulid, slug: r.slug, status_before: r.status, status_after: status })),
  };
}

/** Sets one status on many codes, all-or-nothing; returns the updated payloads. */
export async function updateCodesStatus(
  app: AppContext,
  principal: Principal,
  codeUlids: string[],
  status: CodeStatus,
  opts: { trx?: Knex.Transaction } = {},
): Promise<QrCodePayload[]> {
  const orgId = principal.org.id;
  return inTransaction(app, opts.trx, async (trx) => {
    const rows = await codesOrNotFound(trx, orgId, codeUlids);
    await updateStatuses(
      trx,
      orgId,
      rows.map((r) => r.id),
      status,
      app.clock.now(),
    );
    return (
      await findCodes(
        trx,
        orgId,
        rows.map((r) => r.ulid),
      )
    ).map(codePayload);
  });
}

/** The code a delete would remove (404 as deleteCode would). */
export async function previewDeleteCode(
  app: AppContext,
  principal: Principal,
  codeUlid: string,
): Promise<QrCodePayload> {
  return readCode(app, principal, codeUlid);
}

/** Soft delete: the code stops redirecting and its slug becomes free again. */
export async function deleteCode(
  app: AppContext,
  principal: Principal,
  codeUlid: string,
  opts: { trx?: Knex.Transaction } = {},
): Promise<void> {
  const orgId = principal.org.id;
  await inTransaction(app, opts.trx, async (trx) => {
    const row = await findCode(trx, orgId, codeUlid);
    if (!row || !(await softDeleteCode(trx, orgId, row.id, app.clock.now()))) throw ApiError.notFound('QR code');
  });
}
