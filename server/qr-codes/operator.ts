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
import { createCodes, updateCode, type QrCodeOut } from './service.js';

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

/**
 * Creates a code of any type. Without a domain (`--domain` or the file's domain_ulid) it goes on the
 * first domain the organization may use (a shared fallback unless it has custom domains).
 */
export async function createCodeFromFlags(app: AppContext, org: OrgRecord, flags: CodeFlags): Promise<QrCodeOut> {
  const body = await bodyOf(flags);
  if (body.domain_ulid === undefined) {
    const [first] = await listDomainsPage(app.db, org, 0, 1);
    if (first) body.domain_ulid = first.ulid;
  }
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
