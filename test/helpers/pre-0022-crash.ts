// Leaves, in the stopped service's DATA_DIR, what a redirect process of a version before sql/0022
// (git: abe1e03^, the ledger of sql/0025 but no recorded reservations) left when it was killed with
// SIGKILL, for the codes acme/menu (no cap) and acme/capped (a cap): its Postgres (no
// redirect_reservations table, sql/0022 not applied yet) with the counts that version had written,
// its journal of the batch being filled and a spill file of a batch ClickHouse had refused. Prints
// the referrers of the scans it had answered, as JSON.
//
// What that version wrote, from its code (server/redirect/scan-ipc.ts FileJournal, scan-buffer.ts,
// scan-counts.ts, counters.ts at abe1e03^):
// - the journal `spill/scan_events-<pid>-<token>.tsv`: the batch's rows as TabSeparated lines in
//   SCAN_EVENT_COLUMNS order (the GS1 dimensions of clickhouse/0026 came later), the token a ULID
//   minted at its first row; a kill can cut the last line short (never answered: the answer waits for the write);
// - a spill file `spill/scan_events-<pid>-<ulid>.ndjson`: one `{token, tsv, rows}` line per batch;
// - redirects_count: a batch was counted before its first send (its token into scan_batch_counts,
//   its uncapped codes' scans added), so the spilled batch is counted and the journaled one is not;
//   a capped code's redirects were added when reserved, in blocks, so its count holds every scan of
//   both batches plus the part of its last block the process had not used.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ulid } from 'ulid';
import { clickHouseTime, SCAN_EVENT_COLUMNS } from '../../server/analytics/scan-event.js';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { tsvLine } from '../../server/redirect/scan-buffer.js';
import { scanRow } from './fixtures.js';

/** Scans per code in the journal, in the spill file, and the capped code's unused reservation. */
const JOURNALED = 40;
const SPILLED = 25;
const UNUSED = 7;

const config = loadConfig();
const app = await boot(config, createLogger('silent'), { clickhouse: false, poolMax: 2 });
const served: string[] = [];
try {
  // The schema of that version: sql/0022 (and what came with it) not there yet.
  await app.db.raw('drop table redirect_reservations');
  await app.db('schema_migrations').where({ version: 22 }).delete();
  const codes = await app
    .db('qr_codes')
    .whereIn('slug', ['acme/menu', 'acme/capped'])
    .select<{ id: string; org_id: string; brand_id: string | null; domain_id: string; slug: string }[]>(
      'id',
      'org_id',
      'brand_id',
      'domain_id',
      'slug',
    );
  // A process that is gone: the pid of one that has exited.
  const pid = spawnSync('true').pid;
  const now = Date.now();
  const rows = (prefix: string, n: number) =>
    codes
      .flatMap((c) =>
        Array.from({ length: n }, (_, i) => {
          const referrer = `${c.slug === 'acme/menu' ? 'r' : 'c'}${prefix}${i}.test`;
          served.push(referrer.slice(0, -'.test'.length));
          const at = now - 1000 + i;
          return tsvLine(
            {
              ...scanRow(at, {
                org_id: Number(c.org_id),
                brand_id: Number(c.brand_id ?? 0),
                domain_id: Number(c.domain_id),
                code_id: Number(c.id),
                referrer,
              }),
              scanned_at: clickHouseTime(at),
            },
            SCAN_EVENT_COLUMNS,
          );
        }),
      )
      .join('');
  const spillDir = path.join(config.dataDir, 'spill');
  await fs.mkdir(spillDir, { recursive: true });
  const spilled = { token: ulid(), tsv: rows('s', SPILLED), rows: SPILLED * codes.length };
  await fs.writeFile(path.join(spillDir, `scan_events-${pid}-${ulid()}.ndjson`), JSON.stringify(spilled) + '\n');
  // The row being written when the kill came is cut short.
  const torn = rows('t', 1).slice(0, 30);
  served.splice(-codes.length);
  await fs.writeFile(path.join(spillDir, `scan_events-${pid}-${ulid()}.tsv`), rows('j', JOURNALED) + torn);
  await app.db('scan_batch_counts').insert({ token: spilled.token });
  await app.db('qr_codes').where({ slug: 'acme/menu' }).increment('redirects_count', SPILLED);
  await app
    .db('qr_codes')
    .where({ slug: 'acme/capped' })
    .increment('redirects_count', SPILLED + JOURNALED + UNUSED);
} finally {
  await app.close();
}
process.stdout.write(JSON.stringify(served), () => process.exit(0));
