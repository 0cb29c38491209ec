// The two jobs of an import: the preview (read every link, map it, record the mapping) and the run
// (create the codes, then bring each link's scans, oldest first). A problem with the source
// (unreachable, refused, malformed, 5xx, a 429 longer than allowed) fails the import with its reason
// and keeps the continue token; anything else is thrown for graphile-worker to retry, and each retry
// goes on from the continue token. Nothing already imported is lost or imported twice: codes are
// committed with their mapping rows, scans are written with a deduplication token made of the page
// they came from, and the per-link high-water mark moves in the transaction that counts them.
import crypto from 'node:crypto';
import { clickHouseTime, SCAN_EVENT_COLUMNS, type ScanEvent } from '../analytics/scan-event.js';
import { parseAgent, referrerHost } from '../analytics/agent.js';
import { SealedValueError } from '../at-rest.js';
import type { AppContext } from '../context.js';
import { getOrganizationById } from '../organizations/service.js';
import { insertText } from '../stores/clickhouse.js';
import { importById, linkRows, recountLinks, updateImport, type ContinueToken, type ImportRow } from './repository.js';
import type { ImportOptions } from './schema.js';
import {
  buildPreview,
  createLinkBatch,
  failImport,
  finishImport,
  mappingContext,
  sourceOf,
  stageLinks,
} from './service.js';
import {
  SOURCE_REQUESTS_IN_FLIGHT,
  SourceError,
  type ImportSource,
  type Page,
  type SourceScan,
} from './sources/types.js';

/** Columns of an imported scan: the scan event's, then where it came from (clickhouse/0010). */
const IMPORTED_SCAN_COLUMNS = [...SCAN_EVENT_COLUMNS, 'source', 'import_source'] as const;
type ImportedScan = ScanEvent & { source: 'import'; import_source: string };

/** A failure the user can act on: reported on the import instead of retried. */
function reportable(err: unknown): err is Error {
  return err instanceof SourceError || err instanceof SealedValueError;
}

async function guarded(app: AppContext, importId: number, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (!reportable(err)) throw err;
    await failImport(app, importId, err.message);
  }
}

// ---------------------------------------------------------------------------------------------
// Preview.

export async function previewImport(app: AppContext, importId: number): Promise<void> {
  const row = await importById(app.db, importId);
  if (!row || row.status !== 'previewing') return;
  await guarded(app, importId, async () => {
    const org = await getOrganizationById(app.db, row.org_id);
    const source = await sourceOf(app, row);
    const ctx = await mappingContext(app.db, org, row.options as ImportOptions);
    const token = row.continue_token?.phase === 'preview' ? row.continue_token : { cursor: null, position: 0 };
    // A retried preview goes on from the last page it recorded.
    await app.db('import_links').where({ import_id: importId }).where('position', '>=', token.position).delete();
    let { cursor, position } = token;
    do {
      const page = await source.links(cursor);
      await stageLinks(app, ctx, row, page.items, position);
      position += page.items.length;
      cursor = page.next;
      const next: ContinueToken = { phase: 'preview', cursor, position };
      await updateImport(app.db, importId, { continue_token: JSON.stringify(next), updated_at: app.clock.now() });
    } while (cursor !== null && cursor !== undefined);
    const preview = await buildPreview(app, row, org, ctx);
    const now = app.clock.now();
    await recountLinks(app.db, importId, now);
    // links_done counts the run's work: nothing is done yet.
    await updateImport(app.db, importId, {
      status: 'staged',
      preview: JSON.stringify(preview),
      links_done: 0,
      links_created: 0,
      links_matched: 0,
      links_renamed: 0,
      links_skipped: 0,
      links_failed: 0,
      scans_total:
        (row.options as ImportOptions).history === false || !source.scans ? 0 : preview.counts.scans_expected,
      continue_token: null,
      updated_at: now,
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Run.

export async function runImport(app: AppContext, importId: number): Promise<void> {
  let row = await importById(app.db, importId);
  if (!row || (row.status !== 'queued' && row.status !== 'running')) return;
  const now = app.clock.now();
  row = await updateImport(app.db, importId, { status: 'running', started_at: row.started_at ?? now, updated_at: now });
  const started = row;
  await guarded(app, importId, async () => {
    while ((await createLinkBatch(app, importId)) > 0) {
      // each batch commits on its own: progress shows, a retry goes on with the links left
    }
    const options = started.options as ImportOptions;
    if (options.history !== false) {
      const source = await sourceOf(app, started);
      if (source.scans) await importScans(app, (await importById(app.db, importId))!, source);
    }
    await finishImport(app, importId);
  });
}

const DAY_MS = 86_400_000;

/** SHA-256 in one call where Node has it (20.12 and later: no Hash object per scan), else through a Hash. */
const sha256: (s: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (s) => crypto.hash('sha256', s, 'buffer')
    : (s) => crypto.createHash('sha256').update(s).digest();

/** A 53-bit hash as a decimal string (what visitor_hash holds), of the given parts joined by NUL. */
function hash53(joined: string): string {
  return (sha256(joined).readBigUInt64BE(0) >> 11n).toString();
}

const joinParts = (parts: string[]) => parts.join('\u0000');

/**
 * Values an import computes over and over for a few thousand keys: parsed user agents (parsing one
 * with ua-parser-js and isbot cost a quarter of the time of a scan) and visitor hashes (a visitor is
 * a user agent and a country on a day). Emptied when full, so memory stays flat.
 */
class BoundedCache<V> {
  private readonly values = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string, make: (key: string) => V): V {
    let v = this.values.get(key);
    if (v === undefined) {
      if (this.values.size >= this.max) this.values.clear();
      v = make(key);
      this.values.set(key, v);
    }
    return v;
  }
}

function scanRows(
  agents: BoundedCache<ReturnType<typeof parseAgent>>,
  visitors: BoundedCache<string>,
  row: ImportRow,
  code: { id: number; brand_id: number | null; domain_id: number },
  linkKey: string,
  scans: SourceScan[],
  oldest: number,
): ImportedScan[] {
  const out: ImportedScan[] = [];
  for (const s of scans) {
    // Older than SCAN_RETENTION_DAYS: scan_events' TTL would drop it, so it is not counted either.
    if (s.at.getTime() < oldest) continue;
    const agent = agents.get(s.userAgent, parseAgent);
    const isBot = s.isBot === true || agent.isBot;
    const n = Math.max(1, Math.min(s.count ?? 1, 1_000_000));
    const at = s.at.getTime();
    for (let i = 0; i < n; i++) {
      out.push({
        scan_id: `imp-${hash53(joinParts([row.source, linkKey, String(at), String(i), s.userAgent, s.referrer]))}`,
        scanned_at: clickHouseTime(at),
        org_id: row.org_id,
        brand_id: code.brand_id ?? 0,
        domain_id: code.domain_id,
        code_id: code.id,
        // The source gives no address: a visitor is its user agent and country on a day.
        visitor_hash: visitors.get(
          joinParts([
            String(row.org_id),
            s.userAgent,
            s.country,
            String(Math.floor(at / DAY_MS)),
            s.count ? String(i) : '',
          ]),
          hash53,
        ),
        country: /^[A-Z]{2}$/.test(s.country) ? s.country : '',
        device_type: isBot ? 'bot' : agent.device,
        os: agent.os,
        browser: agent.browser,
        referrer: referrerHost(s.referrer),
        language: '',
        provider: '',
        asn: 0,
        is_bot: isBot ? 1 : 0,
        matched_rule: -1,
        source: 'import',
        import_source: row.source,
      });
    }
  }
  return out;
}

/**
 * Scans gathered across pages and links before one ClickHouse insert (and one Postgres commit). One
 * batch is written while the next one is read, so at most two are held: about 330 bytes a scan as
 * JSONEachRow, some 16 MiB in all.
 */
const SCAN_FLUSH_ROWS = 25_000;

interface LinkIdentity {
  source_domain: string;
  source_key: string;
}

/**
 * Scans read but not yet written: their rows as JSONEachRow lines (no row objects are kept), the
 * pages they came from (the insert's deduplication token), each link's newest scan and count (its
 * high-water mark), and where a new run goes on once they are written.
 */
class PendingScans {
  lines: string[] = [];
  pages: string[] = [];
  marks = new Map<string, { link: LinkIdentity; newest: number; count: number }>();
  next: ContinueToken | null = null;

  add(link: LinkIdentity, page: string, rows: ImportedScan[], newest: number, next: ContinueToken) {
    this.pages.push(page);
    this.next = next;
    if (!rows.length) return;
    for (const r of rows) this.lines.push(JSON.stringify(r));
    const k = JSON.stringify([link.source_domain, link.source_key]);
    const m = this.marks.get(k) ?? { link, newest: 0, count: 0 };
    m.newest = Math.max(m.newest, newest);
    m.count += rows.length;
    this.marks.set(k, m);
  }
}

/**
 * Writes the pending scans: one insert whose deduplication token is made of the pages' identities,
 * then, in one Postgres transaction, every link's high-water mark (one statement) and the counters
 * and the continue token. A retry after a crash in between starts from the same token, reads the
 * same pages into the same insert, and ClickHouse drops it.
 */
async function flushScans(app: AppContext, row: ImportRow, pending: PendingScans): Promise<void> {
  if (!pending.next) return;
  const { lines, marks, next } = pending;
  if (lines.length) {
    await insertText(app.ch.client, {
      table: `${app.ch.database}.scan_events`,
      columns: IMPORTED_SCAN_COLUMNS,
      format: 'JSONEachRow',
      body: lines.join('\n'),
      dedupToken: `import:${hash53(joinParts([String(row.org_id), row.source, ...pending.pages]))}`,
    });
  }
  const links = [...marks.values()];
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
    if (links.length)
      await trx.raw(
        `update imported_links l
            set scans_through = greatest(l.scans_through, m.newest), scans_imported = l.scans_imported + m.count,
                updated_at = ?
           from unnest(?::text[], ?::text[], ?::timestamptz[], ?::bigint[]) as m(source_domain, source_key, newest, count)
          where l.org_id = ? and l.source = ? and l.source_domain = m.source_domain and l.source_key = m.source_key`,
        [
          now,
          links.map((m) => m.link.source_domain),
          links.map((m) => m.link.source_key),
          links.map((m) => new Date(m.newest).toISOString()),
          links.map((m) => m.count),
          row.org_id,
          row.source,
        ],
      );
    await trx('imports')
      .where({ id: row.id })
      .update({
        scans_done: trx.raw('scans_done + ?', [lines.length]),
        continue_token: JSON.stringify(next),
        updated_at: now,
      });
  });
}

/**
 * Batches written one after the other, each while the next is read: a batch is handed over when it
 * is full, and waits for the one before it, so the continue token and the high-water marks move in
 * the order the pages were read. A failed write surfaces at the next hand-over or at the end.
 */
class ScanWriter {
  private writing: Promise<void> = Promise.resolve();
  pending = new PendingScans();

  constructor(
    private readonly app: AppContext,
    private readonly row: ImportRow,
  ) {}

  /** Hands the pending batch over when it is full (after the one before it is written). */
  async maybeFlush(): Promise<void> {
    if (this.pending.lines.length >= SCAN_FLUSH_ROWS) await this.flush();
  }

  async flush(): Promise<void> {
    await this.writing;
    const batch = this.pending;
    this.pending = new PendingScans();
    this.writing = flushScans(this.app, this.row, batch);
    this.writing.catch(() => undefined); // surfaces at the next flush or at drain()
  }

  /** Writes what is pending and waits for every write. */
  async drain(): Promise<void> {
    await this.flush();
    await this.writing;
  }

  /** Waits for the write in progress (a failure of it is thrown). */
  settled(): Promise<void> {
    return this.writing;
  }
}

/**
 * Each created or matched link's scans after its high-water mark, from the continue token on,
 * written SCAN_FLUSH_ROWS at a time (one insert per page and link made small links cost a
 * ClickHouse insert each). A source that fails midway gets what was read before it written first.
 */
async function importScans(app: AppContext, row: ImportRow, source: ImportSource): Promise<void> {
  const token = row.continue_token?.phase === 'scans' ? row.continue_token : null;
  const until = token ? new Date(token.until) : (row.started_at ?? app.clock.now());
  const oldest = app.clock.now().getTime() - app.config.scanRetentionDays * DAY_MS;
  const writer = new ScanWriter(app, row);
  const agents = new BoundedCache<ReturnType<typeof parseAgent>>(10_000);
  const visitors = new BoundedCache<string>(50_000);
  let after = (token?.position ?? 0) - 1;
  try {
    for (;;) {
      const read = await linkRows(app.db, row.id, {}, 200, after);
      if (!read.length) break;
      after = read[read.length - 1].position;
      const chunk = read.filter((l) => l.status === 'created' || l.status === 'matched');
      // The chunk's codes and high-water marks in two queries, not two per link.
      const codes = new Map(
        (
          await app
            .db('qr_codes')
            .whereIn(
              'id',
              chunk.map((l) => l.code_id),
            )
            .select('id', 'brand_id', 'domain_id')
        ).map((c) => [Number(c.id), c]),
      );
      const marks = new Map(
        (
          await app
            .db('imported_links')
            .where({ org_id: row.org_id, source: row.source })
            .whereIn(
              ['source_domain', 'source_key'],
              chunk.map((l) => [l.source_domain, l.source_key]),
            )
            .select('source_domain', 'source_key', 'scans_through')
        ).map((m) => [JSON.stringify([m.source_domain, m.source_key]), m.scans_through as Date | null]),
      );
      const plans = chunk.flatMap((link) => {
        const code = codes.get(Number(link.code_id));
        if (!code) return [];
        // The start of this link's pages stays fixed while they are read (a resume goes on from it).
        const resuming = token !== null && link.position === token.position && token.cursor !== null;
        const since = resuming
          ? token.since
            ? new Date(token.since)
            : null
          : (marks.get(JSON.stringify([link.source_domain, link.source_key])) ?? null);
        const createdAt = (link.code as { created_at?: string | null } | null)?.created_at;
        const ref = {
          key: link.source_key,
          shortCode: link.short_code,
          domain: link.source_domain,
          visits: Number(link.visits_expected),
          createdAt: createdAt ? new Date(createdAt) : null,
        };
        return [{ link, code, since, ref, cursor: (resuming ? token.cursor : null) as unknown }];
      });
      // The first page of the next links is read while the current one is written: most links
      // have one page, so the source's round trips overlap. Pages are still taken in order.
      const firstPages = new Map<number, Promise<Page<SourceScan>>>();
      const prefetch = (i: number) => {
        const p = plans[i];
        if (!p || firstPages.has(i)) return;
        const read = source.scans!(p.ref, p.since, until, p.cursor);
        read.catch(() => undefined); // awaited in its turn; a failure then is the import's
        firstPages.set(i, read);
      };
      for (let i = 0; i < plans.length; i++) {
        for (let k = i; k < i + SOURCE_REQUESTS_IN_FLIGHT; k++) prefetch(k);
        const { link, code, since, ref } = plans[i];
        let cursor = plans[i].cursor;
        // The page read ahead: the link's first (prefetched), then each next one.
        let ahead: Promise<Page<SourceScan>> | undefined = firstPages.get(i);
        firstPages.delete(i);
        for (;;) {
          const page = ahead ? await ahead : await source.scans!(ref, since, until, cursor);
          // The link's next page is asked for before this one is turned into rows and written.
          ahead =
            page.next === null || page.next === undefined ? undefined : source.scans!(ref, since, until, page.next);
          ahead?.catch(() => undefined); // awaited in its turn
          const rows = scanRows(
            agents,
            visitors,
            row,
            { id: Number(code.id), brand_id: code.brand_id, domain_id: Number(code.domain_id) },
            link.source_key,
            page.items,
            oldest,
          );
          const newest = page.items.reduce((m, s) => Math.max(m, s.at.getTime()), 0);
          const last = page.next === null || page.next === undefined;
          const next: ContinueToken = last
            ? { phase: 'scans', position: link.position + 1, cursor: null, until: until.toISOString(), since: null }
            : {
                phase: 'scans',
                position: link.position,
                cursor: page.next,
                until: until.toISOString(),
                since: since?.toISOString() ?? null,
              };
          const identity = JSON.stringify([
            link.source_domain,
            link.source_key,
            since?.toISOString() ?? '',
            until.toISOString(),
            cursor,
          ]);
          writer.pending.add(link, identity, rows, newest, next);
          await writer.maybeFlush();
          if (last) break;
          cursor = page.next;
        }
      }
    }
  } catch (err) {
    // What was read before a source failed is written; a failed write is thrown as it is.
    await writer.settled();
    if (reportable(err)) await writer.drain();
    throw err;
  }
  await writer.drain();
}
