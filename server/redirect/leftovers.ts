// What redirect processes of an earlier run left in the spill directory (spill files, journals),
// replayed before a new redirect serves: by the primary before it forks (REDIRECT_PROCESSES > 1),
// and by the single process when a version before sql/0022 left some (its scans are counted apart).
//
// A version before sql/0022 counted a capped code's redirects when it reserved them and recorded no
// reservation, so a process of it killed outright left the unused part of its blocks in
// redirects_count with nothing to say so, and journaled scans that were counted already. Its
// batches are told by their tokens (scan-counts.ts: minted before sql/0022 was applied here) and
// add no capped code's scans; they list every capped code (sql/0070), and once they are all in, each
// listed code's redirects_count is recounted from the scans stored in ClickHouse, plus what live
// processes hold reserved of it. This runs before this host serves redirects, so no scan of its own
// is between being counted and being stored.
import fs from 'node:fs/promises';
import path from 'node:path';
import { decodeTime } from 'ulid';
import { storedRedirects } from '../analytics/queries.js';
import type { AppContext } from '../context.js';
import { listedRecounts, recountRedirects } from '../qr-codes/scan-lookup.js';
import { ScanBuffer } from './scan-buffer.js';
import { countingEras, scanBatchCounter } from './scan-counts.js';
import { REDIRECT_TABLES } from './scan-ipc.js';
import { scanBatchPublisher } from './scan-stream.js';

/**
 * Replays what redirect processes of an earlier run left (spill files, journals), before any new one
 * starts: the same replay as a scan buffer's at start. Then recounts the codes a version before
 * sql/0022 left to recount, once none of its files is left.
 */
export async function replayLeftovers(app: AppContext): Promise<void> {
  // gs1_resolutions: what a version before clickhouse/0026 wrote beside a GS1 resolution's scan.
  for (const [table, { columns, former }] of Object.entries(REDIRECT_TABLES)) {
    const buffer = new ScanBuffer<object>({
      client: app.ch.client,
      table: `${app.ch.database}.${table}`,
      columns: columns as readonly never[],
      formerColumns: former,
      spillDir: spillDir(app),
      log: app.log,
      count: table === 'scan_events' ? scanBatchCounter(app.db, app.log, columns) : undefined,
      stored:
        table === 'scan_events' || table === 'scan_actions'
          ? scanBatchPublisher(app, columns, table === 'scan_actions' ? 'action' : 'scan')
          : undefined,
    });
    buffer.start();
    await buffer.settled();
    await buffer.close();
  }
  await recountListed(app);
}

/**
 * For the single redirect process, before it serves: replays the leftovers (replayLeftovers) when a
 * version before sql/0022 left files or codes to recount; otherwise its scan buffer replays them
 * while it serves, as always.
 */
export async function replayLegacyLeftovers(app: AppContext): Promise<void> {
  const { reservationsSince } = await countingEras(app.db);
  const legacyFiles = (await spillFiles(app)).some((f) => mintedBefore(f, reservationsSince));
  if (legacyFiles || (await listedRecounts(app.db, app.config.scanRetentionDays)).length) await replayLeftovers(app);
}

function spillDir(app: AppContext): string {
  return path.join(app.config.dataDir, 'spill');
}

function spillFiles(app: AppContext): Promise<string[]> {
  return fs.readdir(spillDir(app)).catch(() => [] as string[]);
}

/** A spill file or journal (`<table>-…-<ulid>.tsv|.ndjson`) whose batch was minted before `ms`. */
function mintedBefore(file: string, ms: number): boolean {
  const name = /^(.*)\.(tsv|ndjson)$/.exec(file);
  if (!name) return false;
  try {
    return decodeTime(name[1].split('-').pop()!) < ms;
  } catch {
    return false; // not named by a ULID (a batch re-queued from the quarantine)
  }
}

/**
 * Recounts the listed codes (sql/0070) from their stored scans, unless a file of a version before
 * sql/0022 is still waiting (ClickHouse down: the next start tries again). A code older than the
 * scans ClickHouse keeps (SCAN_RETENTION_DAYS) cannot be recounted from them: it keeps its count,
 * which may be above its scans by what the killed process had reserved and not used (the cap holds).
 */
async function recountListed(app: AppContext): Promise<void> {
  const listed = await listedRecounts(app.db, app.config.scanRetentionDays);
  if (!listed.length) return;
  const { reservationsSince } = await countingEras(app.db);
  const waiting = (await spillFiles(app)).filter(
    (f) => f.startsWith('scan_events-') && mintedBefore(f, reservationsSince),
  );
  if (waiting.length) {
    app.log.warn(
      { files: waiting },
      'redirect counts not recounted yet: scan files of an older version wait for ClickHouse',
    );
    return;
  }
  const recountable = listed.filter((c) => !c.beyondRetention);
  const stored = await storedRedirects(app.ch, recountable);
  const counts = new Map(recountable.map((c) => [c.id, stored.get(c.id) ?? 0]));
  await recountRedirects(
    app.db,
    listed.map((c) => c.id),
    counts,
  );
  const kept = listed.filter((c) => c.beyondRetention).map((c) => c.id);
  app.log.info(
    { recounted: recountable.length, kept: kept.length ? kept : undefined },
    'redirect counts recounted from the stored scans after a crash of a version before sql/0022',
  );
}
