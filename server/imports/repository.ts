// Data access of imports. Every function takes the organization (or, for the job, the import's id
// that it loaded with its organization) first.
import type { Knex } from 'knex';
import type { OrgRecord } from '../auth/principal.js';

type Db = Knex | Knex.Transaction;

export interface ImportRow {
  id: number;
  ulid: string;
  org_id: number;
  token_id: number | null;
  source: string;
  status: string;
  options: Record<string, unknown>;
  credentials: Buffer | null;
  upload: Buffer | null;
  confirm_token_hash: Buffer | null;
  confirm_expires_at: Date | null;
  preview: Record<string, unknown> | null;
  links_total: number;
  links_done: number;
  links_created: number;
  links_matched: number;
  links_renamed: number;
  links_skipped: number;
  links_failed: number;
  scans_total: string | number;
  scans_done: string | number;
  continue_token: ContinueToken | null;
  error_message: string | null;
  started_at: Date | null;
  confirmed_at: Date | null;
  completed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Where a run goes on: the links phase, or the scans of the link at `position` from `cursor`. */
export type ContinueToken =
  | { phase: 'preview'; cursor: unknown; position: number }
  | { phase: 'links' }
  | { phase: 'scans'; position: number; cursor: unknown; until: string; since: string | null };

export interface ImportLinkRow {
  import_id: number;
  position: number;
  source_key: string;
  source_domain: string;
  short_code: string;
  code: Record<string, unknown> | null;
  visits_expected: string | number;
  status: string;
  problems: { field: string; message: string }[];
  code_id: number | null;
}

export async function findImport(db: Db, org: OrgRecord, ulid: string, forUpdate = false): Promise<ImportRow | null> {
  const q = db('imports').where({ org_id: org.id, ulid: ulid.toUpperCase() }).first();
  return ((await (forUpdate ? q.forUpdate() : q)) as ImportRow | undefined) ?? null;
}

/** A page of the organization's imports, newest first, after (below) the id `beforeId` (0: from the newest). */
export function listImportsPage(db: Db, org: OrgRecord, beforeId: number, n: number): Promise<ImportRow[]> {
  const q = db('imports').where({ org_id: org.id });
  if (beforeId) q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(n);
}

export async function importById(db: Db, id: number, forUpdate = false): Promise<ImportRow | null> {
  const q = db('imports').where({ id }).first();
  return ((await (forUpdate ? q.forUpdate() : q)) as ImportRow | undefined) ?? null;
}

export async function updateImport(db: Db, id: number, patch: Record<string, unknown>): Promise<ImportRow> {
  const [row] = await db('imports').where({ id }).update(patch).returning('*');
  return row as ImportRow;
}

/** Recounts the link counters from the links, so they are exact whatever happened before. */
export async function recountLinks(db: Db, id: number, now: Date): Promise<void> {
  await db.raw(
    `update imports i
        set links_total = c.total, links_done = c.done, links_created = c.created, links_matched = c.matched,
            links_renamed = c.renamed, links_skipped = c.skipped, links_failed = c.failed, updated_at = ?
       from (select count(*)::int as total,
                    count(*) filter (where status <> 'pending')::int as done,
                    count(*) filter (where status = 'created')::int as created,
                    count(*) filter (where status = 'matched')::int as matched,
                    count(*) filter (where status = 'created' and problems @> '[{"field": "slug"}]')::int as renamed,
                    count(*) filter (where status = 'skipped')::int as skipped,
                    count(*) filter (where status = 'failed')::int as failed
               from import_links where import_id = ?) c
      where i.id = ?`,
    [now, id, id],
  );
}

export async function linkRows(
  db: Db,
  importId: number,
  where: Record<string, unknown> = {},
  limit?: number,
  afterPosition = -1,
): Promise<ImportLinkRow[]> {
  const q = db('import_links')
    .where({ import_id: importId, ...where })
    .where('position', '>', afterPosition)
    .orderBy('position');
  return (await (limit ? q.limit(limit) : q)) as ImportLinkRow[];
}

export interface ImportedLink {
  source_domain: string;
  source_key: string;
  code_id: number;
  scans_through: Date | null;
}

/**
 * Links imported earlier from the source whose code is still live, by domain + key. The keys go as
 * two array parameters joined through unnest: a tuple IN list of every link of a large import (the
 * preview asks for all of them) passed Postgres' max_stack_depth at 10,000 links.
 */
export async function importedLinks(
  db: Db,
  org: OrgRecord,
  source: string,
  keys: { domain: string; key: string }[],
): Promise<Map<string, ImportedLink>> {
  if (!keys.length) return new Map();
  const rows = (await db('imported_links as l')
    .joinRaw(
      'join unnest(?::text[], ?::text[]) as k(source_domain, source_key) on k.source_domain = l.source_domain and k.source_key = l.source_key',
      [keys.map((k) => k.domain), keys.map((k) => k.key)],
    )
    .join('qr_codes as c', 'c.id', 'l.code_id')
    .where({ 'l.org_id': org.id, 'l.source': source })
    .whereNull('c.deleted_at')
    .select('l.source_domain', 'l.source_key', 'l.code_id', 'l.scans_through')) as ImportedLink[];
  return new Map(rows.map((r) => [`${r.source_domain}\n${r.source_key}`, { ...r, code_id: Number(r.code_id) }]));
}

export async function liveCodeCount(db: Db, org: OrgRecord): Promise<number> {
  const [{ c }] = await db('qr_codes')
    .where({ org_id: org.id })
    .whereNull('deleted_at')
    .count<{ c: string }[]>('* as c');
  return Number(c);
}

/** The plan's limit on live codes; null when there is none (or no plan). */
export async function codeLimit(db: Db, org: OrgRecord): Promise<number | null> {
  if (!org.plan) return null;
  const row = (await db('plans').where({ id: org.plan.id }).first('max_codes')) as
    { max_codes: number | null } | undefined;
  return row?.max_codes ?? null;
}
