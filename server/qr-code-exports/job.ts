// The print-run jobs: qr-code-export renders an export into its ZIP (enqueued by createExport), in
// file order through the QR-code image service, streaming it into 1 MiB chunks in Postgres (zip.ts)
// and recording its progress; a retried job starts the ZIP over. qr-code-exports-prune (hourly)
// expires completed exports past QR_EXPORT_TTL_HOURS.
import type { AppContext } from '../context.js';
import { toCsv } from '../operations/csv.js';
import { getOrganizationById } from '../organizations/service.js';
import { renderCodeImage } from '../qr-codes/image.js';
import { publicUrl } from '../qr-codes/service.js';
import { publicSlug } from '../qr-codes/slug.js';
import {
  claimExport,
  expireExports,
  exportsDue,
  itemsPage,
  markFailed,
  updateAttempt,
  writeChunk,
} from './repository.js';
import { ZipChunkWriter } from './zip.js';

export const EXPORT_TASK = 'qr-code-export';
export const PRUNE_TASK = 'qr-code-exports-prune';
const MANIFEST_NAME = 'manifest.csv';
const MANIFEST_COLUMNS = ['slug', 'public_url', 'destination', 'file'] as const;

interface ManifestRow {
  slug: string;
  public_url: string;
  destination: string;
  file: string;
}

function destinationUrl(destination: unknown): string {
  if (typeof destination === 'string') return destination;
  const url = (destination as { url?: unknown } | null)?.url;
  return typeof url === 'string' ? url : '';
}

/** Renders the export into its ZIP. A second run of a finished export does nothing. */
export async function runExport(app: AppContext, exportId: number, chunkBytes?: number): Promise<void> {
  const row = await claimExport(app, exportId);
  if (!row) return;
  const org = await getOrganizationById(app.db, row.org_id);
  const attempt = row.attempts;
  const writer = new ZipChunkWriter((seq, data) => writeChunk(app.db, exportId, seq, data), row.created_at, chunkBytes);
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
        // A print run waits for room in the render queue rather than failing when it is full.
        const image = await renderCodeImage(
          app,
          org,
          code,
          {
            format: row.format,
            size: row.size ?? undefined,
            styleUlid: row.style_ulid ?? undefined,
            compressed: row.gs1_compressed && code.type === 'gs1',
          },
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
            code.type,
            code.destination,
          ),
          destination: destinationUrl(code.destination),
          file,
        });
      }
      done += page.codes.length;
      after = page.last;
      await updateAttempt(app.db, exportId, attempt, { done, updated_at: app.clock.now() });
    }
    await writer.add(MANIFEST_NAME, Buffer.from(toCsv(manifest, MANIFEST_COLUMNS)), true);
    const bytes = await writer.finish();
    const now = app.clock.now();
    await updateAttempt(app.db, exportId, attempt, {
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
  await markFailed(app.db, exportId, message, app.clock.now());
}

/** The hourly prune: every completed export past its expiry. Returns how many expired. */
export async function pruneExports(app: AppContext, batch = 100): Promise<number> {
  let total = 0;
  for (;;) {
    const due = await exportsDue(app.db, app.clock.now(), batch);
    await expireExports(app, due);
    total += due.length;
    if (due.length < batch) return total;
  }
}
