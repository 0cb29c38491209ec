// Imports of links and their scan history from another link service (docs/imports.md).
//
// POST /v1/imports keeps the request (credentials and file sealed) and queues the preview job, which
// reads every link of the source, maps each one to a code (slug, domain, destination, dates, cap,
// routing) and records the mapping with its problems: the preview. Confirming queues the run job:
// codes are created in batches (each batch with its mapping rows and its imported_links rows in one
// transaction), then each link's scans are read from the source oldest first and written to
// ClickHouse page by page (job.ts). Re-runs match links on (source, source domain, original key) in
// imported_links and only add scans newer than its high-water mark.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import { Sealer } from '../at-rest.js';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, type FieldErrors } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { getOrganizationById } from '../organizations/service.js';
import type { NewCodeRow } from '../qr-codes/repository.js';
import type { CodeWrite } from '../qr-codes/schema.js';
import { checkReferences, insertPreparedCodes, prepareNewCodes, resolveReferences } from '../qr-codes/service.js';
import { slugKey } from '../qr-codes/slug.js';
import {
  findImport,
  codeLimit,
  importById,
  importedLinks,
  linkRows,
  listImportsPage,
  liveCodeCount,
  recountLinks,
  updateImport,
  type ImportLinkRow,
  type ImportRow,
} from './repository.js';
import type { CreateImportInput, Credentials, ImportOptions } from './schema.js';
import { API_SOURCES, FILE_OR_API_SOURCES, FILE_SOURCES, openSource } from './sources/index.js';
import type { ImportSource, SourceLink, SourceName, Unmappable } from './sources/types.js';

export const PREVIEW_TASK = 'import-preview';
export const RUN_TASK = 'import-run';
const CONFIRM_TTL_MS = 24 * 60 * 60 * 1000;
const PREVIEW_MAPPINGS = 50;
const LINK_BATCH = 500;
const SLUG_RE = /^[A-Za-z0-9_-]{1,64}$/;
const FINAL = new Set(['completed', 'completed_with_errors', 'failed', 'expired']);

type Db = Knex | Knex.Transaction;
const hashToken = (token: string): Buffer => crypto.createHash('sha256').update(token).digest();
const purpose = (row: { ulid: string }) => `import:${row.ulid}`;
const sealer = (app: AppContext) => new Sealer(app.secretKey);

// ---------------------------------------------------------------------------------------------
// Rendering.

export interface LinkReport {
  short_code: string;
  source_domain: string;
  slug: string | null;
  domain_host: string | null;
  destination: string | null;
  status: string;
  problems: { field: string; message: string }[];
}

export function renderImport(r: ImportRow, now: Date) {
  const scansTotal = Number(r.scans_total);
  const scansDone = Number(r.scans_done);
  const work = r.links_total + scansTotal;
  const done = r.links_done + Math.min(scansDone, scansTotal);
  const running = r.status === 'running' || r.status === 'queued';
  let eta: number | null = null;
  if (running && r.started_at && done > 0 && work > done) {
    const elapsed = (now.getTime() - r.started_at.getTime()) / 1000;
    eta = Math.ceil((elapsed * (work - done)) / done);
  }
  return {
    ulid: r.ulid,
    source: r.source,
    status: r.status,
    awaiting_confirmation: r.status === 'staged',
    options: r.options,
    progress: {
      links_total: r.links_total,
      links_done: r.links_done,
      links_created: r.links_created,
      links_matched: r.links_matched,
      links_renamed: r.links_renamed,
      links_skipped: r.links_skipped,
      links_failed: r.links_failed,
      scans_total: scansTotal,
      scans_done: scansDone,
      percent:
        FINAL.has(r.status) && r.status !== 'failed' ? 100 : work ? Math.min(99, Math.floor((done * 100) / work)) : 0,
      eta_seconds: eta,
    },
    preview: r.preview,
    error_message: r.error_message,
    resumable: r.status === 'failed' && r.continue_token !== null,
    confirmed_at: r.confirmed_at?.toISOString() ?? null,
    started_at: r.started_at?.toISOString() ?? null,
    completed_at: r.completed_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}
export type ImportOut = ReturnType<typeof renderImport>;

function linkReport(l: ImportLinkRow, hosts: Map<string, string>): LinkReport {
  const code = l.code as (CodeWrite & { destination?: string }) | null;
  return {
    short_code: l.short_code,
    source_domain: l.source_domain,
    slug: code?.slug ?? null,
    domain_host: code?.domain_ulid ? (hosts.get(code.domain_ulid) ?? null) : null,
    destination: typeof code?.destination === 'string' ? code.destination : null,
    status: l.status,
    problems: l.problems,
  };
}

// ---------------------------------------------------------------------------------------------
// Creating, reading, confirming, resuming.

function sealCredentials(app: AppContext, ulid: string, c: Credentials | undefined): Buffer | null {
  return c && Object.keys(c).length ? sealer(app).seal(JSON.stringify(c), purpose({ ulid })) : null;
}

export async function createImport(
  app: AppContext,
  org: OrgRecord,
  input: CreateImportInput,
  opts: { tokenId: number | null },
): Promise<{ data: ImportOut; confirmToken: string }> {
  const errors: FieldErrors = {};
  const source = input.source;
  if (FILE_SOURCES.has(source) && !input.file) errors.file = [`Importing from ${source} takes its export file.`];
  const needsToken = FILE_OR_API_SOURCES.has(source) && !input.file;
  if (API_SOURCES.has(source) && !input.credentials?.url)
    errors['credentials.url'] = ['The address of the source is required.'];
  if (needsToken && !input.credentials?.token)
    errors['credentials.token'] = ['An API token of the source is required.'];
  if (!FILE_SOURCES.has(source) && !API_SOURCES.has(source) && !FILE_OR_API_SOURCES.has(source))
    errors.source = [`Importing from ${source} is not available yet.`];
  const options: ImportOptions = { keep_created_at: true, history: true, on_clash: 'rename', ...input.options };
  const refs = await resolveReferences(app.db, org, [options]);
  checkReferences(errors, refs, options, 'options.');
  if (Object.keys(errors).length) throw ApiError.validation(errors);

  const ulid = newUlid();
  const now = app.clock.now();
  const token = crypto.randomBytes(32).toString('base64url');
  const row = await app.db.transaction(async (trx) => {
    const [created] = await trx('imports')
      .insert({
        ulid,
        org_id: org.id,
        token_id: opts.tokenId,
        source,
        status: 'previewing',
        options: JSON.stringify(options),
        credentials: sealCredentials(app, ulid, input.credentials),
        upload: input.file
          ? sealer(app).seal(
              JSON.stringify({ file: input.file, log_file: input.log_file ?? null }),
              `${purpose({ ulid })}:file`,
            )
          : null,
        confirm_token_hash: hashToken(token),
        confirm_expires_at: new Date(now.getTime() + CONFIRM_TTL_MS),
        created_at: now,
        updated_at: now,
      })
      .returning('*');
    await enqueueJob(
      trx,
      PREVIEW_TASK,
      { import_id: created.id },
      { jobKey: `import-preview:${ulid}`, maxAttempts: 3 },
    );
    return created as ImportRow;
  });
  return { data: renderImport(row, now), confirmToken: token };
}

async function expireIfStale(app: AppContext, db: Db, row: ImportRow): Promise<ImportRow> {
  const now = app.clock.now();
  if (row.status !== 'staged' || !row.confirm_expires_at || row.confirm_expires_at > now) return row;
  return updateImport(db, row.id, {
    status: 'expired',
    confirm_token_hash: null,
    credentials: null,
    upload: null,
    updated_at: now,
  });
}

export async function readImport(app: AppContext, org: OrgRecord, ulid: string): Promise<ImportOut> {
  const row = await findImport(app.db, org, ulid);
  if (!row) throw ApiError.notFound('import');
  return renderImport(await expireIfStale(app, app.db, row), app.clock.now());
}

/** Every link that could not keep its slug or domain, was skipped or failed, or lost a field. */
/** A page of imports for GET /v1/imports, newest first, each expired when its confirm token lapsed (as readImport). */
export async function listImports(app: AppContext, org: OrgRecord, beforeId: number, n: number): Promise<ImportRow[]> {
  const rows = await listImportsPage(app.db, org, beforeId, n);
  return Promise.all(rows.map((r) => expireIfStale(app, app.db, r)));
}

export async function importReport(app: AppContext, org: OrgRecord, ulid: string): Promise<LinkReport[]> {
  const row = await findImport(app.db, org, ulid);
  if (!row) throw ApiError.notFound('import');
  const links = (await app
    .db('import_links')
    .where({ import_id: row.id })
    .where((q) => q.whereRaw(`problems <> '[]'::jsonb`).orWhereIn('status', ['skipped', 'failed']))
    .orderBy('position')) as ImportLinkRow[];
  const ulids = [
    ...new Set(links.map((l) => (l.code as CodeWrite | null)?.domain_ulid).filter((u): u is string => !!u)),
  ];
  const domains = (await app.db('domains').whereIn('ulid', ulids).select('ulid', 'host')) as {
    ulid: string;
    host: string;
  }[];
  const hosts = new Map(domains.map((d) => [d.ulid, d.host]));
  return links.map((l) => linkReport(l, hosts));
}

export async function confirmImport(app: AppContext, org: OrgRecord, ulid: string, token: string): Promise<ImportOut> {
  const outcome = await app.db.transaction(async (trx) => {
    const found = await findImport(trx, org, ulid, true);
    if (!found) throw ApiError.notFound('import');
    const row = await expireIfStale(app, trx, found);
    if (row.status === 'expired') return { expired: true as const };
    if (row.status === 'previewing')
      throw ApiError.conflict('The preview is not ready yet; confirm once status is staged.');
    if (row.status !== 'staged')
      throw ApiError.conflict(`The import is already ${row.status}; it can be confirmed only once.`);
    if (!row.confirm_token_hash || !crypto.timingSafeEqual(hashToken(token), row.confirm_token_hash))
      throw ApiError.field('confirm_token', 'The confirm token does not match this import.');
    const preview = row.preview as {
      counts?: { clashes?: number };
      code_limit?: { exceeded?: boolean; limit?: number };
    } | null;
    if ((row.options as ImportOptions).on_clash === 'fail' && (preview?.counts?.clashes ?? 0) > 0)
      throw ApiError.conflict(
        `${preview!.counts!.clashes} slugs are already taken and on_clash is fail; nothing was imported.`,
      );
    if (preview?.code_limit?.exceeded)
      throw ApiError.conflict(`The import would exceed the plan's limit of ${preview.code_limit.limit} codes.`);
    const now = app.clock.now();
    const updated = await updateImport(trx, row.id, {
      status: 'queued',
      confirmed_at: now,
      confirm_token_hash: null,
      continue_token: JSON.stringify({ phase: 'links' }),
      updated_at: now,
    });
    await enqueueJob(trx, RUN_TASK, { import_id: row.id }, { jobKey: `import-run:${row.ulid}`, maxAttempts: 5 });
    return { row: updated };
  });
  if ('expired' in outcome)
    throw ApiError.field('confirm_token', 'The confirm token has expired; start the import again.');
  return renderImport(outcome.row, app.clock.now());
}

/** A failed import goes on from its continue token, with the credentials given again. */
export async function resumeImport(
  app: AppContext,
  org: OrgRecord,
  ulid: string,
  credentials: Credentials | undefined,
): Promise<ImportOut> {
  const row = await app.db.transaction(async (trx) => {
    const found = await findImport(trx, org, ulid, true);
    if (!found) throw ApiError.notFound('import');
    if (found.status !== 'failed' || !found.continue_token || !found.confirmed_at)
      throw ApiError.conflict(`Only a failed import that was confirmed can be resumed; this one is ${found.status}.`);
    if (!found.upload && !credentials?.url && !credentials?.token)
      throw ApiError.field('credentials.url', 'The credentials are wiped when an import ends: give them again.');
    const now = app.clock.now();
    const updated = await updateImport(trx, found.id, {
      status: 'queued',
      credentials: sealCredentials(app, found.ulid, credentials) ?? found.credentials,
      error_message: null,
      completed_at: null,
      updated_at: now,
    });
    await enqueueJob(trx, RUN_TASK, { import_id: found.id }, { jobKey: `import-run:${found.ulid}`, maxAttempts: 5 });
    return updated;
  });
  return renderImport(row, app.clock.now());
}

// ---------------------------------------------------------------------------------------------
// The source of a loaded import.

export async function sourceOf(app: AppContext, row: ImportRow): Promise<ImportSource> {
  const credentials = row.credentials
    ? (JSON.parse(sealer(app).open(row.credentials, purpose(row)).toString('utf8')) as Credentials)
    : null;
  const upload = row.upload
    ? (JSON.parse(
        sealer(app)
          .open(row.upload, `${purpose(row)}:file`)
          .toString('utf8'),
      ) as {
        file: string;
        log_file: string | null;
      })
    : null;
  return openSource(
    app,
    row.source as SourceName,
    credentials,
    upload?.file ?? null,
    row.options as ImportOptions,
    upload?.log_file ?? null,
  );
}

// ---------------------------------------------------------------------------------------------
// Mapping a source link to a code.

interface DomainInfo {
  ulid: string;
  id: number;
  host: string;
}

export interface MappingContext {
  org: OrgRecord;
  options: ImportOptions;
  /** The organization's own domains by host, and the domain of links whose host is not here. */
  byHost: Map<string, DomainInfo>;
  fallback: DomainInfo;
}

export async function mappingContext(db: Db, org: OrgRecord, options: ImportOptions): Promise<MappingContext> {
  const rows = (await db('domains')
    .whereNull('deleted_at')
    .where((q) => q.where('org_id', org.id).orWhere((f) => f.whereNull('org_id').andWhere('type', 'fallback')))
    .orderBy('id')
    .select('id', 'ulid', 'host', 'type', 'org_id')) as (DomainInfo & { type: string; org_id: number | null })[];
  const byHost = new Map<string, DomainInfo>();
  for (const d of rows) if (d.org_id !== null) byHost.set(d.host.toLowerCase(), { ...d, id: Number(d.id) });
  const chosen = options.domain_ulid
    ? rows.find((d) => d.ulid === options.domain_ulid)
    : rows.find((d) => d.type === 'fallback');
  if (!chosen) throw new Error('No domain for imported links: configure FALLBACK_ORIGINS or give options.domain_ulid.');
  return { org, options, byHost, fallback: { ...chosen, id: Number(chosen.id) } };
}

/** A slug made of a short code: kept when it is one, else its invalid characters become '-'. */
function slugFor(shortCode: string): string {
  if (SLUG_RE.test(shortCode)) return shortCode;
  const s = shortCode
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64);
  return s || 'link';
}

/** The code a link becomes, before its slug is checked against the organization's codes. */
function mapLink(ctx: MappingContext, link: SourceLink): { code: CodeWrite; problems: Unmappable[] } {
  const problems: Unmappable[] = [...link.unmappable];
  const slug = slugFor(link.shortCode);
  if (slug !== link.shortCode)
    problems.push({ field: 'slug', message: `"${link.shortCode}" is not a valid slug here; it becomes "${slug}".` });
  let domain = link.domain ? ctx.byHost.get(link.domain) : undefined;
  if (!domain) {
    domain = ctx.fallback;
    if (link.domain)
      problems.push({
        field: 'domain',
        message: `${link.domain} is not one of this organization's domains; the code is on ${ctx.fallback.host}.`,
      });
  }
  const code: CodeWrite = {
    slug,
    destination: link.longUrl,
    domain_ulid: domain.ulid,
    name: link.title ? link.title.slice(0, 255) : null,
  };
  if (ctx.options.brand_ulid) code.brand_ulid = ctx.options.brand_ulid;
  if (link.paused) code.status = 'paused';
  if (link.validSince) code.date_begin = link.validSince.toISOString();
  if (link.validUntil) code.expire_at = link.validUntil.toISOString();
  const features = new Set(ctx.org.plan?.features ?? []);
  if (link.maxVisits) {
    if (features.has('redirect_cap')) code.redirect_cap = link.maxVisits;
    else problems.push({ field: 'maxVisits', message: 'The plan has no redirect_cap: the visit limit is left out.' });
  }
  if (link.routing.length) {
    if (features.has('routing')) code.routing = { rules: link.routing };
    else
      problems.push({ field: 'redirect_rules', message: 'The plan has no routing: the redirect rules are left out.' });
  }
  if (link.tags.length)
    problems.push({ field: 'tags', message: `Tags are not kept (${link.tags.join(', ').slice(0, 200)}).` });
  return { code, problems };
}

const fieldProblems = (e: FieldErrors): Unmappable[] =>
  Object.entries(e).flatMap(([field, msgs]) => msgs.map((message) => ({ field, message })));

/**
 * Maps one page of links and records them (positions from `position`): matched when imported
 * before, else a code whose slug is checked against the organization and the earlier links of the
 * import (skip, rename or keep the clash for on_clash fail).
 */
export async function stageLinks(
  app: AppContext,
  ctx: MappingContext,
  row: ImportRow,
  links: SourceLink[],
  position: number,
): Promise<void> {
  if (!links.length) return;
  const { org } = ctx;
  const onClash = ctx.options.on_clash ?? 'rename';
  await app.db.transaction(async (trx) => {
    const seen = await importedLinks(
      trx,
      org,
      row.source,
      links.map((l) => ({ domain: l.domain, key: l.key })),
    );
    const mapped = links.map((l) => ({ link: l, ...mapLink(ctx, l), status: 'pending' }));
    const fresh = mapped.filter((m) => !seen.has(`${m.link.domain}\n${m.link.key}`));
    for (const m of mapped) if (seen.has(`${m.link.domain}\n${m.link.key}`)) m.status = 'matched';
    // Slugs held here, or by earlier links of this import (only those this page could take: reading
    // every earlier link's slug on every page made a large preview quadratic).
    const wantedSlugs = new Set<string>();
    for (const m of fresh) {
      const base = m.code.slug!;
      for (let n = 2; n < 100; n++) wantedSlugs.add(`${base.slice(0, 60)}-${n}`.toLowerCase());
      wantedSlugs.add(base.toLowerCase());
    }
    const wanted = [...wantedSlugs];
    const taken = new Set<string>([
      ...(
        await trx.raw<{ rows: { key: string }[] }>(
          `select lower(slug) as key from qr_codes where org_id = ? and deleted_at is null and lower(slug) = any(?)`,
          [org.id, wanted.map((w) => slugKey(org.slug, w))],
        )
      ).rows.map((r) => r.key),
      ...(
        await trx.raw<{ rows: { key: string }[] }>(
          `select lower(code->>'slug') as key from import_links
            where import_id = ? and code is not null and status <> 'skipped' and lower(code->>'slug') = any(?)`,
          [row.id, wanted],
        )
      ).rows.map((r) => slugKey(org.slug, r.key)),
    ]);
    for (const m of fresh) {
      const base = m.code.slug!;
      if (!taken.has(slugKey(org.slug, base))) {
        taken.add(slugKey(org.slug, base));
        continue;
      }
      if (onClash === 'skip') {
        m.status = 'skipped';
        m.problems.push({ field: 'slug', message: `The slug "${base}" is already taken; the link is skipped.` });
      } else if (onClash === 'fail') {
        m.problems.push({ field: 'slug', message: `The slug "${base}" is already taken.` });
        m.status = 'clash';
      } else {
        let n = 2;
        while (taken.has(slugKey(org.slug, `${base.slice(0, 60)}-${n}`))) n++;
        const renamed = `${base.slice(0, 60)}-${n}`;
        taken.add(slugKey(org.slug, renamed));
        m.code.slug = renamed;
        m.problems.push({ field: 'slug', message: `The slug "${base}" is already taken; the code is "${renamed}".` });
      }
    }
    // The same validation as every new code (URL, dates, routing): a bad link is failed, not fatal.
    const check = fresh.filter((m) => m.status === 'pending' || m.status === 'clash');
    const prepared = await prepareNewCodes(
      app,
      trx,
      org,
      check.map((m) => m.code),
    );
    check.forEach((m, i) => {
      const e = prepared.errors[i];
      if (!e) return;
      const own = fieldProblems(e).filter((p) => !(p.field === 'slug' && m.status === 'clash'));
      if (own.length) {
        m.status = 'failed';
        m.problems.push(...own);
      }
    });
    await trx('import_links').insert(
      mapped.map((m, i) => ({
        import_id: row.id,
        position: position + i,
        source_key: m.link.key,
        source_domain: m.link.domain,
        short_code: m.link.shortCode,
        code: JSON.stringify({ ...m.code, created_at: m.link.createdAt?.toISOString() ?? null }),
        visits_expected: m.link.visits,
        status: m.status === 'clash' ? 'pending' : m.status === 'matched' ? 'pending' : m.status,
        problems: JSON.stringify(m.status === 'matched' ? [] : m.problems),
      })),
    );
  });
}

/** The preview of a staged import: counts, first mappings, every clash and unmappable field, the code limit. */
export async function buildPreview(app: AppContext, row: ImportRow, org: OrgRecord, ctx: MappingContext) {
  const links = await linkRows(app.db, row.id);
  const hosts = new Map<string, string>([...ctx.byHost.values(), ctx.fallback].map((d) => [d.ulid, d.host]));
  const seen = await importedLinks(
    app.db,
    org,
    row.source,
    links.map((l) => ({ domain: l.source_domain, key: l.source_key })),
  );
  const reports = links.map((l) => {
    const r = linkReport(l, hosts);
    if (seen.has(`${l.source_domain}\n${l.source_key}`)) r.status = 'matched';
    return r;
  });
  const clashes = reports.filter((r) => r.problems.some((p) => p.field === 'slug' && /already taken/.test(p.message)));
  const unmappable = reports.filter((r) => r.problems.some((p) => p.field !== 'slug' && p.field !== 'domain'));
  const fresh = reports.filter((r) => r.status === 'pending').length;
  const limit = await codeLimit(app.db, org);
  const live = await liveCodeCount(app.db, org);
  return {
    counts: {
      links: links.length,
      new: fresh,
      matched: reports.filter((r) => r.status === 'matched').length,
      clashes: clashes.length,
      renamed: reports.filter((r) => r.status === 'pending' && r.problems.some((p) => p.field === 'slug')).length,
      domains_not_kept: reports.filter((r) => r.problems.some((p) => p.field === 'domain')).length,
      skipped: reports.filter((r) => r.status === 'skipped').length,
      failed: reports.filter((r) => r.status === 'failed').length,
      unmappable_links: unmappable.length,
      scans_expected: links.reduce((n, l) => n + Number(l.visits_expected), 0),
    },
    mappings: reports.slice(0, PREVIEW_MAPPINGS),
    clashes,
    unmappable,
    code_limit: { limit, live, new: fresh, exceeded: limit !== null && live + fresh > limit },
  };
}

// ---------------------------------------------------------------------------------------------
// The run: codes.

/**
 * Creates the codes of one batch of pending links in one transaction with their mapping rows and
 * their imported_links rows. Returns how many links it handled (0: none left).
 */
export async function createLinkBatch(app: AppContext, importId: number, batch = LINK_BATCH): Promise<number> {
  return app.db.transaction(async (trx) => {
    const row = await importById(trx, importId, true);
    if (!row || row.status !== 'running') return 0;
    const org = await getOrganizationById(trx, row.org_id);
    const links = await linkRows(trx, importId, { status: 'pending' }, batch);
    if (!links.length) return 0;
    const now = app.clock.now();
    const options = row.options as ImportOptions;
    const seen = await importedLinks(
      trx,
      org,
      row.source,
      links.map((l) => ({ domain: l.source_domain, key: l.source_key })),
    );
    const updates: { position: number; status: string; codeId: number | null; problems: Unmappable[] | null }[] = [];
    const toCreate: ImportLinkRow[] = [];
    for (const l of links) {
      const prior = seen.get(`${l.source_domain}\n${l.source_key}`);
      if (prior) updates.push({ position: l.position, status: 'matched', codeId: prior.code_id, problems: null });
      else toCreate.push(l);
    }
    const limit = await codeLimit(trx, org);
    let room = limit === null ? Infinity : Math.max(0, limit - (await liveCodeCount(trx, org)));
    const inputs = toCreate.map((l) => {
      const { created_at: _createdAt, ...code } = l.code as CodeWrite & { created_at?: string | null };
      return code as CodeWrite;
    });
    const prepared = await prepareNewCodes(app, trx, org, inputs);
    const rows: NewCodeRow[] = [];
    toCreate.forEach((l, i) => {
      const r = prepared.rows[i];
      if (!r) return;
      if (room <= 0) {
        prepared.rows[i] = null;
        prepared.errors[i] = { code_limit: [`The plan's limit of ${limit} codes is reached.`] };
        return;
      }
      room--;
      const createdAt = (l.code as { created_at?: string | null }).created_at;
      if (options.keep_created_at !== false && createdAt) r.created_at = new Date(createdAt);
      rows.push(r);
    });
    const ids = await insertPreparedCodes(trx, rows);
    const imported: Record<string, unknown>[] = [];
    toCreate.forEach((l, i) => {
      const r = prepared.rows[i];
      const id = r ? ids.get(r.slug.toLowerCase()) : undefined;
      if (id !== undefined) {
        updates.push({ position: l.position, status: 'created', codeId: id, problems: null });
        imported.push({
          org_id: org.id,
          source: row.source,
          source_domain: l.source_domain,
          source_key: l.source_key,
          code_id: id,
          import_id: row.id,
          created_at: now,
          updated_at: now,
        });
      } else {
        const e = prepared.errors[i] ?? { slug: ['The slug has been taken since the preview.'] };
        updates.push({
          position: l.position,
          status: 'failed',
          codeId: null,
          problems: [...l.problems, ...fieldProblems(e)],
        });
      }
    });
    if (imported.length)
      await trx('imported_links')
        .insert(imported)
        .onConflict(['org_id', 'source', 'source_domain', 'source_key'])
        .merge(['code_id', 'import_id', 'updated_at']);
    const values = updates.map(() => '(?::int, ?::text, ?::bigint, ?::jsonb)').join(', ');
    await trx.raw(
      `update import_links l set status = v.status, code_id = v.code_id, problems = coalesce(v.problems, l.problems)
         from (values ${values}) as v(position, status, code_id, problems)
        where l.import_id = ? and l.position = v.position`,
      [
        ...updates.flatMap((u) => [u.position, u.status, u.codeId, u.problems ? JSON.stringify(u.problems) : null]),
        importId,
      ],
    );
    await recountLinks(trx, importId, now);
    return links.length;
  });
}

// ---------------------------------------------------------------------------------------------
// Ending.

/** Completed (with errors when links were skipped or failed); credentials and file wiped. */
export async function finishImport(app: AppContext, importId: number): Promise<void> {
  const now = app.clock.now();
  await app.db.raw(
    `update imports set status = case when links_failed + links_skipped = 0 then 'completed' else 'completed_with_errors' end,
            credentials = null, upload = null, continue_token = null, completed_at = ?, updated_at = ?
      where id = ? and status = 'running'`,
    [now, now, importId],
  );
}

/**
 * Failed with the reason. What was imported stays; the continue token stays so the import can be
 * resumed; the credentials are wiped (a resume gives them again). The uploaded file is kept for a
 * resume of a file import.
 */
export async function failImport(app: AppContext, importId: number, message: string): Promise<void> {
  const now = app.clock.now();
  await app
    .db('imports')
    .where({ id: importId })
    .whereNotIn('status', ['completed', 'completed_with_errors', 'expired'])
    .update({
      status: 'failed',
      error_message: message.slice(0, 1000),
      credentials: null,
      completed_at: now,
      updated_at: now,
    });
}
