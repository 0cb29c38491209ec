// qrctl's view of codes: a create or update body put together from a JSON file and flags, checked
// by the same JSON Schema as POST and PATCH /v1/qr-codes (every type's destination object), then
// written by the same service.
import fs from 'node:fs/promises';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { listDomainsPage } from '../domains/service.js';
import { createCodeBody, updateCodeBody } from './schema.js';
import type { CodeWrite } from './schema.js';
import { createCodes, getCodeRow, renderCode, updateCode, type QrCodeOut } from './service.js';
import { gs1DefaultSlug, normaliseGtin } from './gs1.js';
import { linkTypeCurie, type Gs1Destination, type Gs1Link } from './gs1-links.js';
import { renderCodeImage } from './image.js';
import { codeImageQuery, type CodeImageQuery } from './image-route.js';
import { pageCodes } from './repository.js';

/** The flags a code write takes beside its file, as qrctl parsed them. */
export interface CodeFlags {
  /** A JSON file holding the whole body (`-`: standard input). */
  file?: string;
  /** A JSON file holding the destination (an object of the type's schema, or a URL string). */
  destinationFile?: string;
  /** A URL, or a JSON object (text starting with `{`). */
  destination?: string;
  type?: string;
  slug?: string;
  name?: string;
  status?: string;
  domain?: string;
  /** A file holding the code's custom_js as text (`-`: standard input). */
  customJsFile?: string;
  /** custom_js: null. */
  noCustomJs?: boolean;
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return file === '-' ? await readStdin() : await fs.readFile(file, 'utf8');
  } catch (err) {
    throw ApiError.field(what, `Cannot read ${file}: ${(err as Error).message}`);
  }
}

async function readJson(file: string, what: string): Promise<unknown> {
  const text = await readText(file, what);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw ApiError.field(what, `${file} is not JSON.`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `--destination`: a URL as it is, or a JSON object (text starting with `{`). */
function destinationFlag(value: string): unknown {
  if (!value.trimStart().startsWith('{')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw ApiError.field('destination', 'Starts with { but is not a JSON object.');
  }
}

/** The body of the file (an object), with the flags on top. */
async function bodyOf(flags: CodeFlags): Promise<Record<string, unknown>> {
  const body = flags.file === undefined ? {} : await readJson(flags.file, 'file');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw ApiError.field('file', 'Must hold a JSON object: the request body of POST or PATCH /v1/qr-codes.');
  }
  const out = { ...(body as Record<string, unknown>) };
  if (flags.destinationFile !== undefined) out.destination = await readJson(flags.destinationFile, 'destination_file');
  if (flags.destination !== undefined) out.destination = destinationFlag(flags.destination);
  for (const key of ['type', 'slug', 'name', 'status'] as const) {
    if (flags[key] !== undefined) out[key] = flags[key];
  }
  if (flags.domain !== undefined) out.domain_ulid = flags.domain;
  if (flags.customJsFile !== undefined && flags.noCustomJs)
    throw ApiError.field('custom_js', 'Give --custom-js-file or --no-custom-js, not both.');
  if (flags.customJsFile !== undefined) out.custom_js = await readText(flags.customJsFile, 'custom_js_file');
  if (flags.noCustomJs) out.custom_js = null;
  return out;
}

/** The first domain the organization may use (a shared fallback unless it has custom domains). */
export async function firstDomainUlid(app: AppContext, org: OrgRecord): Promise<string | undefined> {
  const [first] = await listDomainsPage(app.db, org, 0, 1);
  return first?.ulid;
}

/**
 * Creates a code of any type. Without a domain (`--domain` or the file's domain_ulid) it goes on the
 * first domain the organization may use (a shared fallback unless it has custom domains).
 */
export async function createCodeFromFlags(app: AppContext, org: OrgRecord, flags: CodeFlags): Promise<QrCodeOut> {
  const body = await bodyOf(flags);
  if (body.domain_ulid === undefined) body.domain_ulid = await firstDomainUlid(app, org);
  const input = app.validators.check<CodeWrite>(createCodeBody, 'body', body);
  const [code] = await createCodes(app, org, [input]);
  return code;
}

/** Updates a code (any type; a type change between dynamic types only, as over the API). */
export async function updateCodeFromFlags(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  flags: CodeFlags,
): Promise<QrCodeOut> {
  const input = app.validators.check<CodeWrite>(updateCodeBody, 'body', await bodyOf(flags));
  return updateCode(app, org, codeUlid, input);
}

// ---------------------------------------------------------------------------------------------
// gs1 products (docs/gs1.md): made from flags into the body of POST /v1/qr-codes, their links
// changed through PATCH's body, their image drawn with the image endpoint's query: each checked by
// the API's own schema and written by the same service.

/** The flags of `qrctl gs1 create`. */
export interface Gs1Flags {
  gtin: string;
  cpv?: string;
  lot?: string;
  serial?: string;
  description?: string;
  /** Data attributes as a query string: `17=261231&3103=000500`. */
  data?: string;
  /** The links: a JSON array, or a file holding one (`-`: standard input). */
  links?: string;
  slug?: string;
  name?: string;
  domain?: string;
}

/** `--links` and `--add`: inline JSON (an array or one link object), else a file holding it. */
async function linksOf(value: string, what: string): Promise<unknown[]> {
  const inline = value.trimStart();
  let parsed: unknown;
  if (inline.startsWith('[') || inline.startsWith('{')) {
    try {
      parsed = JSON.parse(inline) as unknown;
    } catch {
      throw ApiError.field(what, 'Starts with [ or { but is not JSON.');
    }
  } else parsed = await readJson(value, what);
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** Creates a gs1 code (a product, or a lot or serial of one) from flags. */
export async function createGs1FromFlags(app: AppContext, org: OrgRecord, flags: Gs1Flags): Promise<QrCodeOut> {
  const destination: Record<string, unknown> = { gtin: flags.gtin };
  for (const k of ['cpv', 'lot', 'serial', 'description'] as const)
    if (flags[k] !== undefined) destination[k] = flags[k];
  if (flags.data !== undefined) destination.data = Object.fromEntries(new URLSearchParams(flags.data));
  destination.links = flags.links === undefined ? [] : await linksOf(flags.links, 'links');
  return createCodeFromFlags(app, org, {
    type: 'gs1',
    slug: flags.slug ?? gs1DefaultSlug(flags),
    name: flags.name,
    domain: flags.domain,
    destination: JSON.stringify(destination),
  });
}

/** A gs1 code as `qrctl gs1 list` shows it. */
export interface Gs1Summary {
  ulid: string;
  slug: string;
  status: string;
  gtin: string;
  cpv: string | null;
  lot: string | null;
  serial: string | null;
  links: number;
  public_url: string;
}

/** The organization's gs1 codes (of one GTIN when given), oldest first. */
export async function listGs1Codes(app: AppContext, org: OrgRecord, gtin?: string): Promise<Gs1Summary[]> {
  let gtin14: string | undefined;
  if (gtin !== undefined) {
    const g = normaliseGtin(gtin);
    if ('problem' in g) throw ApiError.field('gtin', g.problem);
    gtin14 = g.gtin;
  }
  const out: Gs1Summary[] = [];
  for (let after = 0; ;) {
    const rows = await pageCodes(app.db, org, after, 1000, { type: 'gs1', gtin: gtin14 });
    for (const row of rows) {
      const code = renderCode(row);
      const d = code.destination as unknown as Gs1Destination;
      out.push({
        ulid: code.ulid,
        slug: code.slug,
        status: code.status,
        gtin: d.gtin,
        cpv: d.cpv ?? null,
        lot: d.lot ?? null,
        serial: d.serial ?? null,
        links: d.links.length,
        public_url: code.public_url,
      });
    }
    if (rows.length < 1000) return out;
    after = Number(rows[rows.length - 1].id);
  }
}

/** How `qrctl gs1 links` changes a code's links: all replaced, some added, a link type removed. */
export interface Gs1LinkChange {
  replace?: string;
  add?: string;
  removeType?: string;
}

/** The code's links changed (PATCH with the whole destination, checked like every write). */
export async function changeGs1Links(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  change: Gs1LinkChange,
): Promise<QrCodeOut> {
  if (change.replace === undefined && change.add === undefined && change.removeType === undefined)
    throw ApiError.field('links', 'Give --replace, --add or --remove-type.');
  const current = renderCode(await getCodeRow(app.db, org, codeUlid));
  if (current.type !== 'gs1') throw ApiError.field('code_ulid', `This code is of type ${current.type}, not gs1.`);
  const d = current.destination as unknown as Gs1Destination;
  let links: unknown[] = change.replace !== undefined ? await linksOf(change.replace, 'replace') : [...d.links];
  if (change.removeType !== undefined) {
    const type = linkTypeCurie(change.removeType);
    links = links.filter((l) => linkTypeCurie(String((l as Gs1Link).link_type)) !== type);
  }
  if (change.add !== undefined) links.push(...(await linksOf(change.add, 'add')));
  return updateCodeFromFlags(app, org, codeUlid, { destination: JSON.stringify({ ...d, links }) });
}

/** A code's image written to a file, drawn as GET /v1/qr-codes/{code_ulid}/image draws it. */
export async function writeCodeImage(
  app: AppContext,
  org: OrgRecord,
  codeUlid: string,
  query: Record<string, unknown>,
  file: string,
): Promise<{ file: string; format: string; bytes: number; etag: string }> {
  const q = app.validators.check<CodeImageQuery>(codeImageQuery, 'query', query);
  const code = await getCodeRow(app.db, org, codeUlid);
  const format = q.format ?? (file.endsWith('.png') ? 'png' : file.endsWith('.pdf') ? 'pdf' : 'svg');
  const image = await renderCodeImage(app, org, code, {
    format,
    size: q.size,
    margin: q.margin,
    styleUlid: q.style_ulid,
    compressed: q.compressed,
  });
  await fs.writeFile(file, image.body);
  return { file, format, bytes: image.body.length, etag: image.etag };
}
