// Print runs: an export renders a selection of codes (a list, a brand's codes or a bulk import's
// codes) into one ZIP with one image per code (`<slug>.<ext>`) and manifest.csv. Requesting one
// freezes the selection (qr_code_export_items) and enqueues the job in the same transaction; the
// job renders the codes in file order through the QR-code image service, streams the ZIP into
// 1 MiB chunks in Postgres (zip.ts) and records its progress. A retried job starts the ZIP over
// (the chunks of the failed attempt are deleted first). The ZIP is kept QR_EXPORT_TTL_HOURS.
import { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import { findBrand } from '../brands/service.js';
import { findImport } from '../bulk-imports/service.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { toCsv } from '../operations/csv.js';
import { getOrganizationById } from '../organizations/service.js';
import { renderCodeImage } from '../qr-codes/image.js';
import { findCodes, type CodeRow } from '../qr-codes/repository.js';
import { publicUrl } from '../qr-codes/service.js';
import { publicSlug } from '../qr-codes/slug.js';
import { findStyle } from '../qr-styles/service.js';
import type { CreateExportInput, ExportFormat, ExportStatus, SelectionKind } from './schema.js';
import { ZipChunkWriter } from './zip.js';
import { DEFAULT_SIZE } from '../rendering/index.js';

export const EXPORT_TASK = 'qr-code-export';
export const PRUNE_TASK = 'qr-code-exports-prune';
/** Codes rendered between two progress updates. */
export const PAGE_SIZE = 100;
export const MANIFEST_NAME = 'manifest.csv';
export const MANIFEST_COLUMNS = ['slug', 'public_url', 'destination', 'file'] as const;

type Db = Knex | Knex.Transaction;

interface ExportRow {
  id: number;
  ulid: string;
  org_id: number;
  source: string | null;
  status: ExportStatus;
  format: ExportFormat;
  size: number | null;
  style_id: number | null;
  style_ulid: string | null;
  style_name: string | null;
  selection_kind: SelectionKind;
  selection_ulid: string | null;
  total: number;
  done: number;
  attempts: number;
  zip_bytes: string | number | null;
  error_message: string | null;
  completed_at: Date | null;
  expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface QrCodeExportOut {
  ulid: string;
  status: ExportStatus;
  source: string | null;
  format: ExportFormat;
  size: number | null;
  style: { ulid: string; name: string } | null;
  selection: { kind: SelectionKind; ulid: string | null };
  total: number;
  done: number;
  progress_percent: number;
  file_name: string;
  bytes: number | null;
  download_url: string | null;
  error_message: string | null;
  expires_at: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ManifestRow {
  slug: string;
  public_url: string;
  destination: string;
  file: string;
}

const exportFileName = (ulid: string) => `qr-codes-${ulid}.zip`;

export function renderExport(r: ExportRow): QrCodeExportOut {
  const completed = r.status === 'completed';
  return {
    ulid: r.ulid,
    status: r.status,
    source: r.source,
    format: r.format,
    size: r.size,
    style: r.style_ulid ? { ulid: r.style_ulid, name: r.style_name ?? '' } : null,
    selection: { kind: r.selection_kind, ulid: r.selection_ulid },
    total: r.total,
    done: r.done,
    // 100 only once the ZIP is complete (the manifest and directory are written after the last image).
    progress_percent: completed ? 100 : r.total ? Math.min(99, Math.floor((r.done * 100) / r.total)) : 0,
    file_name: exportFileName(r.ulid),
    bytes: r.zip_bytes === null ? null : Number(r.zip_bytes),
    download_url: completed ? `/v1/qr-codes/exports/${r.ulid}/download` : null,
    error_message: r.error_message,
    expires_at: r.expires_at?.toISOString() ?? null,
    completed_at: r.completed_at?.toISOString() ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Data access: every read takes the organization first.

const EXPORT_SELECT = `select e.*, s.ulid as style_ulid, s.name as style_name
    from qr_code_exports e left join qr_styles s on s.id = e.style_id`;

async function findExport(db: Db, org: OrgRecord, ulid: string): Promise<ExportRow | null> {
  const { rows } = await db.raw<{ rows: ExportRow[] }>(`${EXPORT_SELECT} where e.org_id = ? and e.ulid = ?`, [
    org.id,
    ulid.toUpperCase(),
  ]);
  return rows[0] ?? null;
}

async function exportById(db: Db, id: number): Promise<ExportRow | null> {
  const { rows } = await db.raw<{ rows: ExportRow[] }>(`${EXPORT_SELECT} where e.id = ?`, [id]);
  return rows[0] ?? null;
}

/** Code ids of a selection, in file order: the given order, or creation order (id). */
interface Selection {
  kind: SelectionKind;
  ulid: string | null;
  /** `select code_id, ord ... order by ord`, scoped to the organization. */
  sql: string;
  binds: (string | number | string[])[];
}

/**
 * The most codes one export may hold: QR_EXPORT_MAX_CODES, for PNGs larger than 1024 px scaled
 * down by their pixel count, so the largest run costs what QR_EXPORT_MAX_CODES PNGs of 1024 px do.
 */
export function maxCodes(app: AppContext, input: Pick<CreateExportInput, 'format' | 'size'>): number {
  const max = app.config.exportMaxCodes;
  if (input.format !== 'png' || !input.size || input.size <= DEFAULT_SIZE) return max;
  return Math.max(1, Math.floor(max * (DEFAULT_SIZE / input.size) ** 2));
}

function tooMany(max: number, input: CreateExportInput): string {
  const of = input.format === 'png' && (input.size ?? 0) > DEFAULT_SIZE;
  return `At most ${max} codes per export${of ? ` of ${input.size} px PNGs` : ''}`;
}

async function resolveSelection(
  app: AppContext,
  org: OrgRecord,
  input: CreateExportInput,
  max: number,
): Promise<Selection> {
  const given = (['code_ulids', 'brand_ulid', 'bulk_import_ulid'] as const).filter((k) => input[k] !== undefined);
  if (given.length !== 1) {
    const message = 'Give exactly one of code_ulids, brand_ulid and bulk_import_ulid.';
    throw ApiError.validation(Object.fromEntries((given.length ? given : ['code_ulids']).map((k) => [k, [message]])));
  }
  if (input.code_ulids) {
    const ulids = input.code_ulids.map((u) => u.toUpperCase());
    if (ulids.length > max) throw ApiError.field('code_ulids', `${tooMany(max, input)}; got ${ulids.length}.`);
    const seen = new Set<string>();
    const errors: Record<string, string[]> = {};
    ulids.forEach((u, i) => {
      if (seen.has(u)) errors[`code_ulids.${i}`] = ['Listed twice.'];
      seen.add(u);
    });
    const found = new Set((await findCodes(app.db, org, ulids)).map((c) => c.ulid));
    ulids.forEach((u, i) => {
      if (!found.has(u) && !errors[`code_ulids.${i}`])
        errors[`code_ulids.${i}`] = ['No such QR code in this organization.'];
    });
    if (Object.keys(errors).length) throw ApiError.validation(errors);
    return {
      kind: 'codes',
      ulid: null,
      sql: `select c.id as code_id, t.n as ord from unnest(?::text[]) with ordinality as t(ulid, n)
              join qr_codes c on c.org_id = ? and c.ulid = t.ulid and c.deleted_at is null order by t.n`,
      binds: [ulids, org.id],
    };
  }
  if (input.brand_ulid) {
    const brand = await findBrand(app.db, org, input.brand_ulid);
    if (!brand) throw ApiError.field('brand_ulid', 'No such brand in this organization.');
    return {
      kind: 'brand',
      ulid: brand.ulid,
      sql: `select c.id as code_id, c.id as ord from qr_codes c
             where c.org_id = ? and c.brand_id = ? and c.deleted_at is null order by c.id`,
      binds: [org.id, brand.id],
    };
  }
  const imp = await findImport(app.db, org, input.bulk_import_ulid ?? '');
  if (!imp) throw ApiError.field('bulk_import_ulid', 'No such bulk import in this organization.');
  if (!['completed', 'completed_with_errors', 'failed'].includes(imp.status))
    throw ApiError.conflict(`The bulk import is ${imp.status}; export its codes once it has finished.`);
  return {
    kind: 'bulk_import',
    ulid: imp.ulid,
    sql: `select c.id as code_id, r.row_index as ord from bulk_import_rows r
            join qr_codes c on c.id = r.code_id and c.org_id = ? and c.deleted_at is null
           where r.import_id = ? and r.status = 'created' order by r.row_index`,
    binds: [org.id, imp.id],
  };
}

// ---------------------------------------------------------------------------------------------
// Requesting and reading.

/**
 * Freezes the selection and queues the job, in one transaction. `tokenId` is the token that asked
 * (null from a dashboard session), `source` its adapter.
 */
export async function createExport(
  app: AppContext,
  org: OrgRecord,
  input: CreateExportInput,
  opts: { tokenId: number | null; source?: string },
): Promise<QrCodeExportOut> {
  const max = maxCodes(app, input);
  const selection = await resolveSelection(app, org, input, max);
  let styleId: number | null = null;
  if (input.style_ulid) {
    const style = await findStyle(app.db, org, input.style_ulid);
    if (!style) throw ApiError.field('style_ulid', 'No such style in this organization.');
    styleId = style.id;
  }
  const format = input.format ?? 'svg';
  const now = app.clock.now();
  const id = await app.db.transaction(async (trx) => {
    const [created] = await trx('qr_code_exports')
      .insert({
        ulid: newUlid(),
        org_id: org.id,
        token_id: opts.tokenId,
        source: opts.source ?? 'api',
        status: 'queued',
        format,
        size: input.size ?? null,
        style_id: styleId,
        selection_kind: selection.kind,
        selection_ulid: selection.ulid,
        total: 0,
        created_at: now,
        updated_at: now,
      })
      .returning<{ id: number; ulid: string }[]>(['id', 'ulid']);
    // One more than the limit is enough to refuse; the selection is never read whole into memory.
    const { rowCount } = await trx.raw<{ rowCount: number }>(
      `insert into qr_code_export_items (export_id, position, code_id)
       select ?, (row_number() over (order by s.ord))::int - 1, s.code_id from (${selection.sql} limit ?) s`,
      [created.id, ...selection.binds, max + 1],
    );
    if (rowCount > max) {
      const field = selection.kind === 'brand' ? 'brand_ulid' : 'bulk_import_ulid';
      throw ApiError.field(field, `${tooMany(max, input)}; this selection has more.`);
    }
    if (rowCount === 0) {
      const field = selection.kind === 'brand' ? 'brand_ulid' : 'bulk_import_ulid';
      throw ApiError.field(field, 'This selection holds no live QR code.');
    }
    await trx('qr_code_exports').where({ id: created.id }).update({ total: rowCount });
    await enqueueJob(
      trx,
      EXPORT_TASK,
      { export_id: created.id },
      { jobKey: `qr-code-export:${created.ulid}`, maxAttempts: 3, queueName: `qr-code-exports:${org.id}` },
    );
    return created.id;
  });
  return renderExport((await exportById(app.db, id)) as ExportRow);
}

/** A completed export past its expiry loses its ZIP and becomes expired (also done by the hourly prune). */
async function expireIfDue(app: AppContext, row: ExportRow): Promise<ExportRow> {
  if (row.status !== 'completed' || !row.expires_at || row.expires_at > app.clock.now()) return row;
  await expireExports(app, [row.id]);
  return (await exportById(app.db, row.id)) ?? row;
}

export async function readExport(app: AppContext, org: OrgRecord, exportUlid: string): Promise<QrCodeExportOut> {
  const row = await findExport(app.db, org, exportUlid);
  if (!row) throw ApiError.notFound('export');
  return renderExport(await expireIfDue(app, row));
}

export interface ExportDownload {
  fileName: string;
  bytes: number;
  body: Readable;
}

/** The ZIP of a completed export, read chunk by chunk as the caller consumes it. */
export async function openDownload(app: AppContext, org: OrgRecord, exportUlid: string): Promise<ExportDownload> {
  const found = await findExport(app.db, org, exportUlid);
  if (!found) throw ApiError.notFound('export');
  const row = await expireIfDue(app, found);
  if (row.status !== 'completed') {
    const why =
      row.status === 'expired'
        ? 'The export has expired and its ZIP was removed; request a new export.'
        : row.status === 'failed'
          ? 'The export failed; see error_message and request a new export.'
          : `The export is ${row.status}; download it once status is completed.`;
    throw ApiError.conflict(why);
  }
  const id = row.id;
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let seq = 0; ; seq++) {
      const chunk = await app.db('qr_code_export_chunks').where({ export_id: id, seq }).first<{ data: Buffer }>('data');
      if (!chunk) return;
      yield chunk.data;
    }
  }
  return { fileName: exportFileName(row.ulid), bytes: Number(row.zip_bytes), body: Readable.from(chunks()) };
}

// ---------------------------------------------------------------------------------------------
// The job.

function destinationUrl(destination: unknown): string {
  if (typeof destination === 'string') return destination;
  const url = (destination as { url?: unknown } | null)?.url;
  return typeof url === 'string' ? url : '';
}

/** Items after `afterPosition` with their live codes (deleted since the request: left out). */
async function itemsPage(
  db: Db,
  org: OrgRecord,
  exportId: number,
  afterPosition: number,
): Promise<{ last: number; codes: CodeRow[] } | null> {
  const items = await db('qr_code_export_items as i')
    .join('qr_codes as c', 'c.id', 'i.code_id')
    .where('i.export_id', exportId)
    .andWhere('i.position', '>', afterPosition)
    .orderBy('i.position')
    .limit(PAGE_SIZE)
    .select<{ position: number; ulid: string }[]>('i.position', 'c.ulid');
  if (!items.length) return null;
  const byUlid = new Map(
    (
      await findCodes(
        db,
        org,
        items.map((i) => i.ulid),
      )
    ).map((c) => [c.ulid, c]),
  );
  return {
    last: items[items.length - 1].position,
    codes: items.map((i) => byUlid.get(i.ulid)).filter((c): c is CodeRow => c !== undefined),
  };
}

/**
 * Claims the export for one attempt: processing, counters reset and the chunks of an earlier
 * attempt deleted. Null when there is nothing to do (finished, or gone).
 */
async function claim(app: AppContext, exportId: number): Promise<ExportRow | null> {
  return app.db.transaction(async (trx) => {
    const row = await trx('qr_code_exports').where({ id: exportId }).forUpdate().first<ExportRow | undefined>();
    if (!row || (row.status !== 'queued' && row.status !== 'processing')) return null;
    await trx('qr_code_export_chunks').where({ export_id: exportId }).del();
    const now = app.clock.now();
    await trx('qr_code_exports')
      .where({ id: exportId })
      .update({ status: 'processing', done: 0, attempts: row.attempts + 1, started_at: now, updated_at: now });
    return exportById(trx, exportId);
  });
}

/** Renders the export into its ZIP. A second run of a finished export does nothing. */
export async function runExport(app: AppContext, exportId: number, chunkBytes?: number): Promise<void> {
  const row = await claim(app, exportId);
  if (!row) return;
  const org = await getOrganizationById(app.db, row.org_id);
  const attempt = row.attempts;
  const ours = () => app.db('qr_code_exports').where({ id: exportId, status: 'processing', attempts: attempt });
  const writer = new ZipChunkWriter(
    async (seq, data) => {
      await app.db('qr_code_export_chunks').insert({ export_id: exportId, seq, data });
    },
    row.created_at,
    chunkBytes,
  );
  const manifest: ManifestRow[] = [];
  try {
    let after = -1;
    let done = 0;
    for (
      let page = await itemsPage(app.db, org, exportId, after);
      page;
      page = await itemsPage(app.db, org, exportId, after)
    ) {
      for (const code of page.codes) {
        const image = await renderCodeImage(
          app,
          org,
          code,
          { format: row.format, size: row.size ?? undefined, styleUlid: row.style_ulid ?? undefined },
          true,
        );
        const slug = publicSlug(code.slug);
        const file = `${slug}.${image.extension}`;
        await writer.add(file, image.body, row.format === 'svg');
        manifest.push({
          slug,
          public_url: publicUrl(
            { type: code.domain_type, host: code.domain_host, origin: code.domain_origin },
            code.slug,
          ),
          destination: destinationUrl(code.destination),
          file,
        });
      }
      done += page.codes.length;
      after = page.last;
      await ours().update({ done, updated_at: app.clock.now() });
    }
    await writer.add(MANIFEST_NAME, Buffer.from(toCsv(manifest, MANIFEST_COLUMNS)), true);
    const bytes = await writer.finish();
    const now = app.clock.now();
    await ours().update({
      status: 'completed',
      done,
      zip_bytes: bytes,
      completed_at: now,
      expires_at: new Date(now.getTime() + app.config.exportTtlHours * 3600_000),
      updated_at: now,
    });
  } catch (err) {
    writer.abort();
    throw err;
  }
}

/** After the last attempt (or an error no retry can fix): failed with the reason, chunks deleted. */
export async function failExport(app: AppContext, exportId: number, message: string): Promise<void> {
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
    const updated = await trx('qr_code_exports')
      .where({ id: exportId })
      .whereIn('status', ['queued', 'processing'])
      .update({ status: 'failed', error_message: message.slice(0, 1000), completed_at: now, updated_at: now });
    if (updated) await trx('qr_code_export_chunks').where({ export_id: exportId }).del();
  });
}

/** Completed exports lose their ZIP and frozen selection and become expired. */
async function expireExports(app: AppContext, ids: number[]): Promise<void> {
  if (!ids.length) return;
  await app.db.transaction(async (trx) => {
    const expired = await trx('qr_code_exports')
      .whereIn('id', ids)
      .andWhere({ status: 'completed' })
      .update({ status: 'expired', updated_at: app.clock.now() })
      .returning<{ id: number }[]>('id');
    const gone = expired.map((e) => e.id);
    if (!gone.length) return;
    await trx('qr_code_export_chunks').whereIn('export_id', gone).del();
    await trx('qr_code_export_items').whereIn('export_id', gone).del();
  });
}

/** The hourly prune: every completed export past its expiry. Returns how many expired. */
export async function pruneExports(app: AppContext, batch = 100): Promise<number> {
  let total = 0;
  for (;;) {
    const due = await app
      .db('qr_code_exports')
      .where({ status: 'completed' })
      .andWhere('expires_at', '<=', app.clock.now())
      .orderBy('expires_at')
      .limit(batch)
      .pluck<number[]>('id');
    await expireExports(app, due);
    total += due.length;
    if (due.length < batch) return total;
  }
}
