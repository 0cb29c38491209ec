// The business rules of QR codes, shared by the REST routes, the MCP tools and the bulk-import
// worker: validation beyond the schema, plan gating, references to domains, brands and styles,
// slug uniqueness, and the payload. Writes that span several codes are all-or-nothing.
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import { requireFeature, type OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, sqlState, UNIQUE_VIOLATION, type FieldErrors } from '../errors.js';
import { toFieldErrors } from '../schemas/validation.js';
import { takesNewCodes } from '../domains/domain-row.js';
import {
  codeNamesById,
  findCode,
  findCodes,
  insertCodes,
  pageCodes,
  type CodeFilter,
  resolveRefs,
  softDeleteCode,
  takenSlugs,
  takenGs1Keys,
  gs1KeyString,
  type Gs1KeyRef,
  updateCodeRow,
  updateStatuses,
  type CodeRow,
  type CodeUpdate,
  type NewCodeRow,
  type Refs,
} from './repository.js';
import { createCodeBody, type CodeSettings, type CodeStatus, type CodeWrite, type ListCodesQuery } from './schema.js';
import { getBrand } from '../brands/service.js';
import { getDomain } from '../domains/service.js';
import {
  addError,
  checkDates,
  checkDateValue,
  checkDestination,
  slugProblem,
  typeChangeProblem,
  withNormalisedUrls,
} from './validate.js';
import { canonicalType, DESTINATION_SCHEMAS, isStaticType, type CodeType, type StaticType } from './types.js';
import { staticPayload } from './payload.js';
import { payloadProblem } from '../rendering/index.js';
import { publicSlug, slugKey, storedSlug } from './slug.js';
import { gs1PublicUrl, resolverStem, type Gs1Destination } from './gs1-links.js';
import { emitEvent, emitEvents } from '../webhooks/events.js';
import { normalisePixels, type TrackingPixel } from './pixels.js';
import { CUSTOM_JS_FEATURE, customJsDomainProblem, customJsSizeProblem } from './custom-js.js';

type Db = Knex | Knex.Transaction;

// ---------------------------------------------------------------------------------------------
// The response.

export interface QrCodeOut {
  ulid: string;
  name: string | null;
  slug: string;
  type: string;
  /** false for static types: nothing is counted, and redirects_count is absent. */
  trackable: boolean;
  status: string;
  public_url: string;
  destination: unknown;
  routing: Record<string, unknown> | null;
  schedule: Record<string, unknown> | null;
  password: boolean;
  redirects_count?: number;
  brand: { ulid: string; name: string } | null;
  domain: { ulid: string; host: string };
  style: { ulid: string; name: string } | null;
  date_begin: string | null;
  expire_at: string | null;
  redirect_cap: number | null;
  utm_params: Record<string, string> | null;
  device_routing: Record<string, unknown> | null;
  language_routing: Record<string, unknown> | null;
  tracking_pixels: TrackingPixel[] | null;
  custom_js: string | null;
  conversion_tracking: boolean;
  landing_config: Record<string, unknown> | null;
  prelander_enabled: boolean;
  prelander_seconds: number | null;
  prelander_message: string | null;
  settings: CodeSettings;
  created_at: string;
  updated_at: string;
}

/**
 * Fallback origin: `<origin>/<org-slug>/<slug>`; custom domain: `https://<host>/<slug>`. A gs1
 * code's is its GS1 Digital Link URI instead: `<origin>/<org-slug>/01/<gtin>…` on a fallback origin,
 * `https://<host>/01/<gtin>…` on a custom domain (./gs1-links.ts gs1PublicUrl).
 */
export function publicUrl(
  domain: { type: string; host: string; origin: string | null },
  storedSlug: string,
  type: string = 'url',
  destination: unknown = null,
): string {
  const stem = resolverStem(domain, storedSlug.slice(0, storedSlug.indexOf('/')));
  if (type === 'gs1') return gs1PublicUrl(stem, destination as Gs1Destination);
  return `${stem}/${publicSlug(storedSlug)}`;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function renderCode(r: CodeRow): QrCodeOut {
  const type = canonicalType(r.type);
  const trackable = !isStaticType(type);
  return {
    ulid: r.ulid,
    name: r.name,
    slug: r.slug,
    type,
    trackable,
    status: r.status,
    public_url: publicUrl(
      { type: r.domain_type, host: r.domain_host, origin: r.domain_origin },
      r.slug,
      type,
      r.destination,
    ),
    destination: r.destination,
    routing: r.routing,
    schedule: r.schedule,
    password: r.has_password,
    ...(trackable ? { redirects_count: Number(r.redirects_count) } : {}),
    brand: r.brand_ulid ? { ulid: r.brand_ulid, name: r.brand_name ?? '' } : null,
    domain: { ulid: r.domain_ulid, host: r.domain_host },
    style: r.style_ulid ? { ulid: r.style_ulid, name: r.style_name ?? '' } : null,
    date_begin: iso(r.date_begin),
    expire_at: iso(r.expire_at),
    redirect_cap: r.redirect_cap,
    utm_params: r.utm_params,
    device_routing: r.device_routing,
    language_routing: r.language_routing,
    tracking_pixels: r.tracking_pixels as TrackingPixel[] | null,
    custom_js: r.custom_js,
    conversion_tracking: r.conversion_tracking,
    landing_config: r.landing_config,
    prelander_enabled: r.prelander_enabled,
    prelander_seconds: r.prelander_seconds,
    prelander_message: r.prelander_message,
    settings: r.settings ?? {},
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Validation of new codes, in batches (one query per kind of reference, one for slugs).

/** Plan features a write uses: a gated key with a non-null value. Null clears and is always allowed. */
function gatedFeatures(input: CodeWrite): string[] {
  const out: string[] = [];
  for (const key of ['redirect_cap', 'routing', 'schedule', 'password'] as const) {
    if (input[key] !== undefined && input[key] !== null) out.push(key);
  }
  if (input.custom_js !== undefined && input.custom_js !== null) out.push(CUSTOM_JS_FEATURE);
  return out;
}

export function requireCodeFeatures(org: OrgRecord, input: CodeWrite): void {
  for (const f of gatedFeatures(input)) requireFeature(org, f);
}

/** The references a code (or a bulk import's defaults) may name. */
export interface CodeReferences {
  domain_ulid?: string | null;
  brand_ulid?: string | null;
  style_ulid?: string | null;
}

/**
 * The "does this domain, brand or style belong to the organization" rule: adds an error for each
 * given reference that is not among the resolved ones (resolveRefs binds them to the organization).
 */
export function checkReferences(errors: FieldErrors, refs: Refs, given: CodeReferences, fieldPrefix = ''): void {
  if (given.domain_ulid) {
    const domain = refs.domains.get(given.domain_ulid);
    if (!domain) addError(errors, `${fieldPrefix}domain_ulid`, 'No such domain in this organization.');
    else if (!takesNewCodes(domain)) {
      addError(errors, `${fieldPrefix}domain_ulid`, `This domain takes no new codes (status ${domain.status}).`);
    }
  }
  if (given.brand_ulid && !refs.brands.has(given.brand_ulid))
    addError(errors, `${fieldPrefix}brand_ulid`, 'No such brand in this organization.');
  if (given.style_ulid && !refs.styles.has(given.style_ulid))
    addError(errors, `${fieldPrefix}style_ulid`, 'No such style in this organization.');
}

/** Looks up, in one query per kind, which of the references of several inputs the organization may use. */
export async function resolveReferences(db: Db, org: OrgRecord, given: CodeReferences[]): Promise<Refs> {
  return resolveRefs(db, org, {
    domains: given.map((g) => g.domain_ulid).filter((u): u is string => !!u),
    brands: given.map((g) => g.brand_ulid).filter((u): u is string => !!u),
    styles: given.map((g) => g.style_ulid).filter((u): u is string => !!u),
  });
}

/** A static payload that no QR symbol can hold, even at the lowest error-correction level: 422 now, not at print. */
function checkPayloadFits(errors: FieldErrors, type: StaticType, destination: unknown): void {
  const problem = payloadProblem(staticPayload(type, destination), 'L');
  if (problem) addError(errors, 'destination', problem);
}

/** The destination of a non-url type against its schema (PATCH without type: the stored type's). */
export function destinationSchemaErrors(app: AppContext, errors: FieldErrors, type: CodeType, d: unknown): void {
  if (type === 'url') return;
  const fn = app.validators.compile(DESTINATION_SCHEMAS[type], 'body');
  if (fn(d)) return;
  for (const [field, msgs] of Object.entries(toFieldErrors(fn.errors ?? [])))
    for (const m of msgs) addError(errors, field === '_' ? 'destination' : `destination.${field}`, m);
}

/**
 * Pixels as stored (custom URLs normalised), with their problems added to the errors: a static code
 * is never scanned through us, so it cannot carry pixels.
 */
function checkPixels(
  errors: FieldErrors,
  type: CodeType,
  pixels: TrackingPixel[] | null | undefined,
): TrackingPixel[] | null | undefined {
  if (!pixels) return pixels;
  if (isStaticType(type) && pixels.length) {
    addError(
      errors,
      'tracking_pixels',
      `A static code (${type}) is not scanned through the service: it cannot load pixels.`,
    );
    return pixels;
  }
  const checked = normalisePixels(pixels, 'tracking_pixels');
  for (const [field, message] of Object.entries(checked.problems)) addError(errors, field, message);
  return checked.pixels;
}

/**
 * A gs1 code is answered by the GS1-Conformant resolver, whose callers (apps, tills, scanners, a
 * linkset reader) follow redirects and read linksets: a password form would be a 200 HTML page in
 * place of the item, which the standard forbids (no 200 for an error condition) and no machine can
 * fill in. Such a code takes no password (docs/gs1.md).
 */
function checkGs1Password(errors: FieldErrors, type: CodeType, password: string | null | undefined): void {
  if (type === 'gs1' && password)
    addError(
      errors,
      'password',
      'A gs1 code cannot have a password: the GS1 resolver answers apps and scanners with redirects and linksets, which have no password step (docs/gs1.md).',
    );
}

/** A script's size (bytes of UTF-8) and type: a static or gs1 code has no page of ours, so it runs nothing. */
function checkCustomJs(errors: FieldErrors, type: CodeType, js: string | null | undefined): void {
  if (!js) return;
  if (isStaticType(type)) {
    addError(errors, 'custom_js', `A static code (${type}) is not served by the service: it cannot run a script.`);
    return;
  }
  if (type === 'gs1') {
    addError(
      errors,
      'custom_js',
      'A gs1 code is answered by the GS1 resolver, which serves no page: it cannot run a script.',
    );
    return;
  }
  const problem = customJsSizeProblem(js);
  if (problem) addError(errors, 'custom_js', problem);
}

/** The message of every custom_js domain problem starts so (told apart from other custom_js errors). */
const CUSTOM_JS_DOMAIN = 'custom_js runs only on a verified custom domain';

/** custom_js on a domain that is not a verified custom domain of the organization (unknown domains are checkReferences'). */
function checkCustomJsDomain(
  errors: FieldErrors,
  domain: { type: string; status: string; host: string } | undefined,
): void {
  const problem = domain ? customJsDomainProblem(domain) : null;
  if (problem) addError(errors, 'custom_js', problem);
}

/**
 * The 422 of field errors: custom_js_requires_custom_domain when custom_js's domain rule is all that
 * is wrong (in every input), validation_failed otherwise.
 */
function codeValidationError(errors: FieldErrors): ApiError {
  const fields = Object.entries(errors);
  const domainOnly =
    fields.length > 0 &&
    fields.every(
      ([field, msgs]) =>
        (field === 'custom_js' || field.endsWith('.custom_js')) && msgs.every((m) => m.startsWith(CUSTOM_JS_DOMAIN)),
    );
  return domainOnly ? ApiError.customJsRequiresCustomDomain(errors) : ApiError.validation(errors);
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
  // A url destination gets our plainer message; the other types' schemas speak for themselves.
  if (obj.destination !== undefined && canonicalType(obj.type as string | undefined) === 'url')
    checkDestination(own, obj.destination);
  for (const [field, msgs] of Object.entries(toFieldErrors(fn.errors ?? []))) {
    if (field === 'slug' && own.slug) continue;
    if (field.startsWith('destination') && Object.keys(own).some((k) => k.startsWith('destination'))) continue;
    for (const m of msgs) addError(errors, field, m);
  }
  for (const [field, msgs] of Object.entries(own)) for (const m of msgs) addError(errors, field, m);
  return errors;
}

/** The Digital Link key a gs1 input takes on its domain (null for other types or an unresolved domain). */
function gs1KeyOf(refs: Refs, input: CodeWrite, domainId?: number): Gs1KeyRef | null {
  if (canonicalType(input.type) !== 'gs1' || typeof input.destination !== 'object') return null;
  const d = input.destination as unknown as Gs1Destination;
  const id = domainId ?? (input.domain_ulid ? refs.domains.get(input.domain_ulid)?.id : undefined);
  return id === undefined ? null : { domainId: id, gtin: d.gtin, cpv: d.cpv, lot: d.lot, serial: d.serial };
}

const GS1_TAKEN =
  'A gs1 code with this GTIN, cpv, lot and serial already exists on this domain: change that code instead (one Digital Link URI, one code).';

/** One live gs1 code per Digital Link key and domain: repeats in the batch and keys already taken are 422. */
async function checkGs1Keys(
  db: Db,
  org: OrgRecord,
  refs: Refs,
  inputs: CodeWrite[],
  errors: FieldErrors[],
  idx: number[],
  exceptId?: number,
  domainId?: number,
): Promise<void> {
  const keys = new Map<number, Gs1KeyRef>();
  for (const i of idx) {
    const k = gs1KeyOf(refs, inputs[i], domainId);
    if (k) keys.set(i, k);
  }
  if (!keys.size) return;
  const taken = await takenGs1Keys(db, org, [...keys.values()], exceptId);
  const firstOf = new Map<string, number>();
  for (const [i, k] of keys) {
    const s = gs1KeyString(k);
    const first = firstOf.get(s);
    if (first !== undefined)
      addError(errors[i], 'destination', `Repeats the GTIN, cpv, lot and serial of entry ${first}.`);
    else firstOf.set(s, i);
    if (taken.has(s)) addError(errors[i], 'destination', GS1_TAKEN);
  }
}

/** The unique index of gs1 keys, hit by a concurrent write between the check and the write. */
function gs1KeyRace(err: unknown): boolean {
  return sqlState(err) === UNIQUE_VIOLATION && (err as { constraint?: string }).constraint === 'qr_codes_gs1_key';
}

export interface PreparedCodes {
  /** Per input: its field errors, or null when it is valid. */
  errors: (FieldErrors | null)[];
  /** Per input: the row to insert, or null when invalid. */
  rows: (NewCodeRow | null)[];
  /** The inputs with their URLs normalised (as stored). */
  inputs: CodeWrite[];
  refs: Refs;
}

/**
 * Validates new codes like POST /v1/qr-codes does (schema, URLs, routing, schedule, dates,
 * references owned by the organization, slugs free and not repeated in the batch) and builds
 * their rows. Plan gating is the caller's (requireCodeFeatures). Later duplicates of a slug in
 * the same batch are the invalid ones.
 */
export async function prepareNewCodes(
  app: AppContext,
  db: Db,
  org: OrgRecord,
  inputs: CodeWrite[],
): Promise<PreparedCodes> {
  const now = app.clock.now();
  // Values Postgres cannot store were refused at the boundary (validateInput).
  const errors: FieldErrors[] = inputs.map((input) => schemaErrors(app, input));
  // The inputs with every URL normalised: what is stored and previewed.
  const normalised = inputs.map((input, i): CodeWrite => {
    if (Object.keys(errors[i]).length) return input;
    const type = canonicalType(input.type);
    const out = withNormalisedUrls(errors[i], input, type);
    out.tracking_pixels = checkPixels(errors[i], type, input.tracking_pixels);
    checkGs1Password(errors[i], type, input.password);
    checkCustomJs(errors[i], type, input.custom_js);
    if (!Object.keys(errors[i]).length && isStaticType(type)) checkPayloadFits(errors[i], type, out.destination);
    checkDateValue(errors[i], 'date_begin', input.date_begin);
    checkDateValue(errors[i], 'expire_at', input.expire_at);
    if (!Object.keys(errors[i]).length) checkDates(errors[i], date(input.date_begin), date(input.expire_at));
    return out;
  });
  const ok = (i: number) => !Object.keys(errors[i]).length;
  const idx = inputs.map((_, i) => i).filter(ok);
  const refs = await resolveReferences(
    db,
    org,
    idx.map((i) => inputs[i]),
  );
  const firstOf = new Map<string, number>();
  for (const i of idx) {
    const input = inputs[i];
    checkReferences(errors[i], refs, input);
    if (input.custom_js) checkCustomJsDomain(errors[i], refs.domains.get(input.domain_ulid!));
    const key = slugKey(org.slug, input.slug!);
    const first = firstOf.get(key);
    if (first !== undefined) addError(errors[i], 'slug', `Repeats the slug of entry ${first}.`);
    else firstOf.set(key, i);
  }
  const taken = await takenSlugs(db, org, [...firstOf.keys()]);
  for (const i of idx) {
    if (taken.has(slugKey(org.slug, inputs[i].slug!))) addError(errors[i], 'slug', 'The slug has already been taken.');
  }
  await checkGs1Keys(db, org, refs, normalised, errors, idx.filter(ok));
  const rows: (NewCodeRow | null)[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const input = normalised[i];
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
      slug: storedSlug(org.slug, input.slug!),
      type: canonicalType(input.type),
      landing_config: json(input.landing_config),
      status: input.status ?? 'active',
      destination: JSON.stringify(input.destination),
      routing: json(input.routing),
      schedule: json(input.schedule),
      // Hashed by hashNewPasswords when the rows are written, never for a preview.
      password_hash: null,
      redirect_cap: input.redirect_cap ?? null,
      date_begin: date(input.date_begin),
      expire_at: date(input.expire_at),
      utm_params: json(input.utm_params),
      tracking_pixels: json(input.tracking_pixels),
      custom_js: input.custom_js ?? null,
      conversion_tracking: input.conversion_tracking ?? false,
      prelander_enabled: input.prelander_enabled ?? false,
      prelander_seconds: input.prelander_seconds ?? null,
      prelander_message: input.prelander_message ?? null,
      settings: JSON.stringify(input.settings ?? {}),
      created_at: now,
      updated_at: now,
    });
  }
  return { errors: errors.map((e, i) => (ok(i) ? null : e)), rows, refs, inputs: normalised };
}

// ---------------------------------------------------------------------------------------------
// Services for REST and MCP.

/**
 * Hashes the passwords of prepared rows, in place, through the process's bounded PasswordWork:
 * once, right before the rows are inserted (a preview or a staged import hashes nothing).
 */
export async function hashNewPasswords(app: AppContext, prepared: PreparedCodes): Promise<void> {
  await Promise.all(
    prepared.rows.map(async (row, i) => {
      const password = prepared.inputs[i].password;
      if (row && password) row.password_hash = await app.passwords.hash(password);
    }),
  );
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
  org: OrgRecord,
  inputs: CodeWrite[],
  opts: { trx?: Knex.Transaction; fieldPrefix?: string } = {},
): Promise<QrCodeOut[]> {
  return (await createCodeRows(app, org, inputs, opts)).map(renderCode);
}

/** What createCodes would create; throws exactly the errors createCodes would. Writes nothing. */
export async function previewCreateCodes(
  app: AppContext,
  org: OrgRecord,
  inputs: CodeWrite[],
  opts: { fieldPrefix?: string } = {},
): Promise<CodePreview[]> {
  const { prepared, rows } = await prepareOrFail(app, app.db, org, inputs, opts.fieldPrefix);
  return rows.map((r, i): CodePreview => {
    const d = prepared.refs.domains.get(inputs[i].domain_ulid!)!;
    return {
      slug: r.slug,
      public_url: publicUrl(d, r.slug, r.type, prepared.inputs[i].destination),
      destination: prepared.inputs[i].destination,
      status: r.status,
      name: r.name,
      domain: { ulid: d.ulid, host: d.host },
    };
  });
}

/** Validates like createCodes; 403 for a plan-gated field, 422 with every field error. */
async function prepareOrFail(
  app: AppContext,
  db: Db,
  org: OrgRecord,
  inputs: CodeWrite[],
  fieldPrefix: string | undefined,
): Promise<{ prepared: PreparedCodes; rows: NewCodeRow[]; prefix: string | null }> {
  for (const input of inputs) requireCodeFeatures(org, input);
  const prefix = inputs.length === 1 && fieldPrefix === undefined ? null : (fieldPrefix ?? 'codes');
  const prepared = await prepareNewCodes(app, db, org, inputs);
  const errors = prefixed(prepared.errors, prefix);
  if (Object.keys(errors).length) throw codeValidationError(errors);
  return { prepared, rows: prepared.rows as NewCodeRow[], prefix };
}

/** createCodes returning the stored rows (with their ids), for callers that need them (demo data). */
export async function createCodeRows(
  app: AppContext,
  org: OrgRecord,
  inputs: CodeWrite[],
  opts: { trx?: Knex.Transaction; fieldPrefix?: string } = {},
): Promise<CodeRow[]> {
  return inTransaction(app, opts.trx, async (trx) => {
    const { prepared, rows, prefix } = await prepareOrFail(app, trx, org, inputs, opts.fieldPrefix);
    await hashNewPasswords(app, prepared);
    const ids = await insertCodes(trx, rows).catch((err: unknown) => {
      throw gs1KeyRace(err) ? ApiError.field('destination', GS1_TAKEN) : err;
    });
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
      org,
      rows.map((r) => r.ulid),
    );
    const byUlid = new Map(created.map((c) => [c.ulid, c]));
    const out = rows.map((r) => byUlid.get(r.ulid)!);
    await emitEvents(trx, org.id, 'code.created', out.map(renderCode), app.clock.now());
    return out;
  });
}

/**
 * Inserts rows prepared by prepareNewCodes; a slug taken meanwhile is skipped, not an error.
 * Returns the new ids by lower-cased stored slug (the bulk import's per-row outcome).
 */
export function insertPreparedCodes(trx: Knex.Transaction, rows: NewCodeRow[]): Promise<Map<string, number>> {
  return insertCodes(trx, rows);
}

/** A live code of the organization, or 404. */
export async function getCodeRow(db: Db, org: OrgRecord, codeUlid: string): Promise<CodeRow> {
  const row = await findCode(db, org, codeUlid);
  if (!row) throw ApiError.notFound('QR code');
  return row;
}

/** Names and stored slugs (`<org-slug>/<slug>`) of codes by id, deleted ones included (for labels). */
export async function codeNames(
  db: Db,
  org: OrgRecord,
  ids: number[],
): Promise<{ id: number; ulid: string; name: string | null; slug: string }[]> {
  return codeNamesById(db, org, ids);
}

export async function readCode(app: AppContext, org: OrgRecord, codeUlid: string): Promise<QrCodeOut> {
  return renderCode(await getCodeRow(app.db, org, codeUlid));
}

/** The list's filter from its query: the brand and domain are looked up in the organization (404 when not found). */
export async function codeFilter(app: AppContext, org: OrgRecord, q: ListCodesQuery): Promise<CodeFilter> {
  const [brand, domain] = await Promise.all([
    q.brand_ulid ? getBrand(app.db, org, q.brand_ulid) : undefined,
    q.domain_ulid ? getDomain(app.db, org, q.domain_ulid) : undefined,
  ]);
  return {
    search: q.search,
    status: q.status,
    type: q.type,
    brandId: brand ? Number(brand.id) : undefined,
    domainId: domain ? Number(domain.id) : undefined,
    gtin: q.gtin === undefined ? undefined : q.gtin.padStart(14, '0'),
    order: q.order,
  };
}

/** Rows for the list endpoint: up to n codes after the keyset position, filtered and ordered. */
export function listCodeRows(
  app: AppContext,
  org: OrgRecord,
  afterId: number,
  n: number,
  filter: CodeFilter = {},
): Promise<CodeRow[]> {
  return pageCodes(app.db, org, afterId, n, filter);
}

/** PATCH: only the keys given change; null clears a nullable key. */
export async function updateCode(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  patch: CodeWrite,
  opts: { trx?: Knex.Transaction } = {},
): Promise<QrCodeOut> {
  requireCodeFeatures(org, patch);
  return inTransaction(app, opts.trx, async (trx) => {
    const current = await getCodeRow(trx, org, codeUlid);
    const errors: FieldErrors = {};
    const stored = canonicalType(current.type);
    const type = patch.type !== undefined ? canonicalType(patch.type) : stored;
    const change = typeChangeProblem(stored, type);
    if (change) throw ApiError.field('type', change);
    if (type !== stored && patch.destination === undefined)
      throw ApiError.field(
        'destination',
        `Changing the type to ${type} needs that type's destination in the same request.`,
      );
    // A body without type was not checked against the stored type's destination schema yet.
    if (patch.type === undefined && patch.destination !== undefined)
      destinationSchemaErrors(app, errors, type, patch.destination);
    if (Object.keys(errors).length) throw ApiError.validation(errors);
    const urls = withNormalisedUrls(errors, patch, type);
    const pixels = checkPixels(errors, type, patch.tracking_pixels);
    checkGs1Password(errors, type, patch.password);
    checkCustomJs(errors, type, patch.custom_js);
    if (!Object.keys(errors).length && isStaticType(type) && urls.destination !== undefined)
      checkPayloadFits(errors, type, urls.destination);
    checkDateValue(errors, 'date_begin', patch.date_begin);
    checkDateValue(errors, 'expire_at', patch.expire_at);
    if (Object.keys(errors).length) throw ApiError.validation(errors);
    const begin = patch.date_begin !== undefined ? date(patch.date_begin) : current.date_begin;
    const expire = patch.expire_at !== undefined ? date(patch.expire_at) : current.expire_at;
    checkDates(errors, begin, expire);
    const refs = await resolveReferences(trx, org, [patch]);
    checkReferences(errors, refs, patch);
    // The script the code keeps, on the domain it ends up on: set now, or kept while the code moves.
    const script = patch.custom_js !== undefined ? patch.custom_js : current.custom_js;
    if (script && (patch.custom_js !== undefined || patch.domain_ulid !== undefined)) {
      const moving = patch.domain_ulid !== undefined ? refs.domains.get(patch.domain_ulid) : undefined;
      const domain =
        patch.domain_ulid === undefined
          ? { type: current.domain_type, status: current.domain_status, host: current.domain_host }
          : moving;
      if (domain) {
        const before = errors.custom_js?.length ?? 0;
        checkCustomJsDomain(errors, domain);
        // A move that keeps the stored script says what to do about it.
        if (patch.custom_js === undefined && (errors.custom_js?.length ?? 0) > before)
          errors.custom_js[errors.custom_js.length - 1] =
            `${errors.custom_js[errors.custom_js.length - 1]} This code has custom_js: moving it to ${domain.host} needs custom_js: null in the same request (the script is not cleared for you).`;
      }
    }
    const slug = patch.slug !== undefined ? storedSlug(org.slug, patch.slug) : undefined;
    if (slug && (await takenSlugs(trx, org, [slug.toLowerCase()], current.id)).size)
      addError(errors, 'slug', 'The slug has already been taken.');
    if (type === 'gs1' && (urls.destination !== undefined || patch.domain_ulid !== undefined)) {
      const domainId = patch.domain_ulid !== undefined ? refs.domains.get(patch.domain_ulid)?.id : current.domain_id;
      const given = { type, destination: urls.destination ?? current.destination } as CodeWrite;
      if (domainId !== undefined) await checkGs1Keys(trx, org, refs, [given], [errors], [0], current.id, domainId);
    }
    if (Object.keys(errors).length) throw codeValidationError(errors);
    const now = app.clock.now();
    const set: CodeUpdate = { updated_at: now };
    if (patch.name !== undefined) set.name = patch.name;
    if (slug !== undefined) set.slug = slug;
    if (urls.destination !== undefined) set.destination = JSON.stringify(urls.destination);
    if (patch.type !== undefined) set.type = type;
    if (patch.landing_config !== undefined) set.landing_config = json(patch.landing_config);
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.domain_ulid !== undefined) set.domain_id = refs.domains.get(patch.domain_ulid)!.id;
    if (patch.brand_ulid !== undefined) set.brand_id = patch.brand_ulid ? refs.brands.get(patch.brand_ulid)!.id : null;
    if (patch.style_ulid !== undefined) set.style_id = patch.style_ulid ? refs.styles.get(patch.style_ulid)!.id : null;
    if (patch.redirect_cap !== undefined) set.redirect_cap = patch.redirect_cap;
    if (patch.password !== undefined)
      set.password_hash = patch.password ? await app.passwords.hash(patch.password) : null;
    if (urls.routing !== undefined) set.routing = json(urls.routing);
    if (urls.schedule !== undefined) set.schedule = json(urls.schedule);
    if (patch.date_begin !== undefined) set.date_begin = begin;
    if (patch.expire_at !== undefined) set.expire_at = expire;
    if (patch.utm_params !== undefined) set.utm_params = json(patch.utm_params);
    if (pixels !== undefined) set.tracking_pixels = json(pixels);
    if (patch.custom_js !== undefined) set.custom_js = patch.custom_js;
    if (patch.conversion_tracking !== undefined) set.conversion_tracking = patch.conversion_tracking;
    if (patch.prelander_enabled !== undefined) set.prelander_enabled = patch.prelander_enabled;
    if (patch.prelander_seconds !== undefined) set.prelander_seconds = patch.prelander_seconds;
    if (patch.prelander_message !== undefined) set.prelander_message = patch.prelander_message;
    if (patch.settings !== undefined) set.settings = JSON.stringify(patch.settings);
    try {
      await trx.transaction(async (sp) => {
        await updateCodeRow(sp, org, current.id, set);
      });
    } catch (err) {
      if (gs1KeyRace(err)) throw ApiError.field('destination', GS1_TAKEN);
      if (sqlState(err) === UNIQUE_VIOLATION) throw ApiError.field('slug', 'The slug has already been taken.');
      throw err;
    }
    const updated = renderCode((await findCode(trx, org, codeUlid))!);
    await emitEvent(trx, org.id, 'code.updated', updated, now);
    return updated;
  });
}

export interface StatusChangePreview {
  status: CodeStatus;
  /** Codes whose status would change. */
  changing: number;
  codes: { ulid: string; slug: string; status_before: string; status_after: CodeStatus }[];
}

async function codesOrNotFound(db: Db, org: OrgRecord, ulids: string[]): Promise<CodeRow[]> {
  const unique = [...new Set(ulids.map((u) => u.toUpperCase()))];
  const rows = await findCodes(db, org, unique);
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
  org: OrgRecord,
  codeUlids: string[],
  status: CodeStatus,
): Promise<StatusChangePreview> {
  const rows = await codesOrNotFound(app.db, org, codeUlids);
  return {
    status,
    changing: rows.filter((r) => r.status !== status).length,
    codes: rows.map((r) => ({ ulid: r.ulid, slug: r.slug, status_before: r.status, status_after: status })),
  };
}

/** Sets one status on many codes, all-or-nothing; returns the updated payloads. */
export async function updateCodesStatus(
  app: AppContext,
  org: OrgRecord,
  codeUlids: string[],
  status: CodeStatus,
  opts: { trx?: Knex.Transaction } = {},
): Promise<QrCodeOut[]> {
  return inTransaction(app, opts.trx, async (trx) => {
    const rows = await codesOrNotFound(trx, org, codeUlids);
    await updateStatuses(
      trx,
      org,
      rows.map((r) => r.id),
      status,
      app.clock.now(),
    );
    const updated = (
      await findCodes(
        trx,
        org,
        rows.map((r) => r.ulid),
      )
    ).map(renderCode);
    await emitEvents(trx, org.id, 'code.updated', updated, app.clock.now());
    return updated;
  });
}

/** The code a delete would remove (404 as deleteCode would). */
export async function previewDeleteCode(app: AppContext, org: OrgRecord, codeUlid: string): Promise<QrCodeOut> {
  return readCode(app, org, codeUlid);
}

/** Soft delete: the code stops redirecting and its slug becomes free again. */
export async function deleteCode(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  opts: { trx?: Knex.Transaction } = {},
): Promise<void> {
  await inTransaction(app, opts.trx, async (trx) => {
    const row = await findCode(trx, org, codeUlid);
    const now = app.clock.now();
    if (!row || !(await softDeleteCode(trx, org, row.id, now))) throw ApiError.notFound('QR code');
    // The code as it was when deleted.
    await emitEvent(trx, org.id, 'code.deleted', renderCode(row), now);
  });
}
