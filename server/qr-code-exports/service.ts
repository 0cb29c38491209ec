// Print runs: an export renders a selection of codes (a list, a brand's codes or a bulk import's
// codes) into one ZIP with one image per code (`<slug>.<ext>`) and manifest.csv. Requesting one
// freezes the selection (qr_code_export_items) and enqueues the job (job.ts) in the same
// transaction. The ZIP is kept QR_EXPORT_TTL_HOURS. Data access is repository.ts.
import { Readable } from 'node:stream';
import type { OrgRecord } from '../auth/principal.js';
import { findBrand } from '../brands/service.js';
import { findImport } from '../bulk-imports/repository.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { findCodes } from '../qr-codes/repository.js';
import { findStyle } from '../qr-styles/service.js';
import { DEFAULT_SIZE } from '../rendering/index.js';
import { EXPORT_TASK } from './job.js';
import { exportById, expireExports, findExport, insertExport, readChunk, type ExportRow } from './repository.js';
import type { CreateExportInput, ExportFormat, ExportStatus, SelectionKind } from './schema.js';

export interface QrCodeExportOut {
  ulid: string;
  status: ExportStatus;
  source: string | null;
  format: ExportFormat;
  size: number | null;
  style: { ulid: string; name: string } | null;
  gs1_compressed: boolean;
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

const exportFileName = (ulid: string) => `qr-codes-${ulid}.zip`;

function renderExport(r: ExportRow): QrCodeExportOut {
  const completed = r.status === 'completed';
  return {
    ulid: r.ulid,
    status: r.status,
    source: r.source,
    format: r.format,
    size: r.size,
    style: r.style_ulid ? { ulid: r.style_ulid, name: r.style_name ?? '' } : null,
    gs1_compressed: r.gs1_compressed,
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
function maxCodes(app: AppContext, input: Pick<CreateExportInput, 'format' | 'size'>): number {
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
    const created = await insertExport(
      trx,
      {
        org_id: org.id,
        token_id: opts.tokenId,
        source: opts.source ?? 'api',
        format,
        size: input.size ?? null,
        style_id: styleId,
        gs1_compressed: input.gs1_compressed ?? false,
        selection_kind: selection.kind,
        selection_ulid: selection.ulid,
        now,
      },
      selection,
      max,
    );
    const rowCount = created.count;
    if (rowCount > max) {
      const field = selection.kind === 'brand' ? 'brand_ulid' : 'bulk_import_ulid';
      throw ApiError.field(field, `${tooMany(max, input)}; this selection has more.`);
    }
    if (rowCount === 0) {
      const field = selection.kind === 'brand' ? 'brand_ulid' : 'bulk_import_ulid';
      throw ApiError.field(field, 'This selection holds no live QR code.');
    }
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
      const chunk = await readChunk(app.db, id, seq);
      if (!chunk) return;
      yield chunk;
    }
  }
  return { fileName: exportFileName(row.ulid), bytes: Number(row.zip_bytes), body: Readable.from(chunks()) };
}
