import { expect } from 'chai';
import { statements as scanEvents } from '../../clickhouse/0001_scan_events.js';
import { statements as scanDaily } from '../../clickhouse/0002_scan_daily.js';
import { statements as scanSpans } from '../../clickhouse/0004_scan_spans.js';
import { statements as importedScans } from '../../clickhouse/0010_imported_scans.js';
import { statements as scanBatch } from '../../clickhouse/0012_scan_batch.js';
import { statements as scanGs1 } from '../../clickhouse/0026_scan_gs1_dimensions.js';
import { statements as spanLevels } from '../../clickhouse/0029_scan_span_levels.js';
import { statements as dailyRollup } from '../../clickhouse/0030_scan_daily_rollup.js';
import { statements as spanRoll } from '../../clickhouse/0031_scan_span_roll.js';
import { rollupDaily, rollupReport, rawTotals, type RollupFilter } from '../../server/analytics/queries.js';
import { daysDue, ROLL_DELAY_MS, rollDay, rollFinishedDays, rolledThrough } from '../../server/analytics/span-roll.js';
import { NO_GS1, REDIRECT_SCAN_COLUMNS, type ScanEvent } from '../../server/analytics/scan-event.js';
import { encodeScanRow } from '../../server/redirect/scan-rows.js';
import { insertText, type ClickHouseHandle } from '../../server/stores/clickhouse.js';
import type { ClickHouseMigrationContext } from '../../server/stores/migrate.js';
import { dropClickHouseDatabase, freshDatabases } from '../helpers/stores.js';

const DAY_MS = 86_400_000;
const flat = (sql: string) => sql.replace(/\s+/g, ' ').trim();
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('analytics: the longer spans rolled once their day is over (clickhouse/0031, server/analytics/span-roll.ts)', () => {
  describe('the days due', () => {
    const at = (iso: string) => Date.parse(iso);

    it('rolls a day once it has been over for the delay, and every day after the last rolled up to it, in order', () => {
      expect(ROLL_DELAY_MS).to.equal(10 * 60_000);
      expect(daysDue('2026-11-27', at('2026-11-29T00:09:59.999Z'))).to.deep.equal([]);
      expect(daysDue('2026-11-27', at('2026-11-29T00:10:00.000Z'))).to.deep.equal(['2026-11-28']);
      expect(daysDue('2026-11-27', at('2026-11-29T23:59:59.000Z'))).to.deep.equal(['2026-11-28']);
      expect(daysDue('2026-11-24', at('2026-11-29T06:00:00.000Z'))).to.deep.equal([
        '2026-11-25',
        '2026-11-26',
        '2026-11-27',
        '2026-11-28',
      ]);
      // Across a month and a year.
      expect(daysDue('2026-12-30', at('2027-01-02T01:00:00.000Z'))).to.deep.equal(['2026-12-31', '2027-01-01']);
      expect(daysDue('2026-11-28', at('2026-11-29T12:00:00.000Z'))).to.deep.equal([]);
    });
  });

  describe('DDL', () => {
    const ctx = (cluster: string | null): ClickHouseMigrationContext => ({
      database: 'qr',
      cluster,
      retentionDays: 400,
    });

    it('replaces both views by one that writes one-day spans, pending while their day is not over, and drops scan_daily', () => {
      const sql = spanRoll(ctx(null)).map(flat);
      expect(sql[0]).to.equal('DROP VIEW IF EXISTS qr.scan_daily_rollup_mv');
      expect(sql[1]).to.equal('DROP VIEW IF EXISTS qr.scan_spans_mv');
      expect(sql[2]).to.equal(
        'ALTER TABLE qr.scan_spans ADD COLUMN IF NOT EXISTS pending UInt8, MODIFY ORDER BY (org_id, scope, dimension, is_bot, span, start, code_id, brand_id, value, pending)',
      );
      expect(sql[3]).to.match(/^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_rollup_mv TO qr\.scan_spans AS /);
      expect(sql[3]).to.include("toUInt8(day >= toDate(now(), 'UTC')) AS pending");
      expect(sql[3]).to.include(
        "ARRAY JOIN if(day >= toDate(now(), 'UTC'), CAST([0] AS Array(UInt8)), CAST([0, 2, 4, 6] AS Array(UInt8))) AS span",
      );
      expect(sql[3]).to.include(' FROM qr.scan_events ARRAY JOIN [');
      expect(sql[4]).to.match(/^CREATE TABLE IF NOT EXISTS qr\.scan_span_rolls \( day Date,/);
      expect(sql[5]).to.include("SELECT toDate(now(), 'UTC') - 1");
      expect(sql.slice(6)).to.deep.equal(['DROP TABLE IF EXISTS qr.scan_daily']);
    });

    it('on a cluster alters every shard, reads the local events, and keeps one record of the days rolled for all nodes', () => {
      const sql = spanRoll(ctx('c1')).map(flat);
      expect(sql[2]).to.match(
        /^ALTER TABLE qr\.scan_spans_local ON CLUSTER c1 ADD COLUMN IF NOT EXISTS pending UInt8, MODIFY ORDER BY/,
      );
      expect(sql[3]).to.equal('ALTER TABLE qr.scan_spans ON CLUSTER c1 ADD COLUMN IF NOT EXISTS pending UInt8');
      expect(sql[4]).to.match(
        /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_rollup_mv ON CLUSTER c1 TO qr\.scan_spans_local /,
      );
      expect(sql[4]).to.include(' FROM qr.scan_events_local ');
      expect(sql[5]).to.include("ReplicatedMergeTree('/clickhouse/tables/qr/scan_span_rolls', '{shard}-{replica}')");
      expect(sql.slice(7)).to.deep.equal([
        'DROP TABLE IF EXISTS qr.scan_daily ON CLUSTER c1',
        'DROP TABLE IF EXISTS qr.scan_daily_local ON CLUSTER c1',
      ]);
    });
  });

  describe('applied to chDB', () => {
    let ch: ClickHouseHandle;
    /** Every migration before 0031: the rollups as they were written until now. */
    let old: ClickHouseHandle;
    /** The same scans, the first batch before 0031 and the rest after it, then rolled. */
    let rolled: ClickHouseHandle;
    const today = dayOf(Date.now());
    const yesterday = dayOf(Date.now() - DAY_MS);
    /** The first day of the aligned 16-day span (span 4) that holds today. */
    const aligned16 = Date.now() - (Date.now() % (16 * DAY_MS));
    let seed = 11;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
    /** Scans on `days` (most today), two organizations, branded and unbranded codes, bots, empty values. */
    const events = (n: number, from: number, days: string[]): ScanEvent[] =>
      Array.from({ length: n }, (_, i) => {
        const code = 1 + Math.floor(next() * 6);
        const bot = next() < 0.15;
        return {
          scan_id: `01JS${String(from + i).padStart(22, '0')}`,
          scanned_at: `${pick(days)} ${String(Math.floor(next() * 24)).padStart(2, '0')}:00:00.000`,
          org_id: code <= 4 ? 1 : 2,
          brand_id: code === 4 ? 0 : 1 + (code % 2),
          domain_id: 0,
          code_id: code,
          visitor_hash: String(1 + Math.floor(next() * 200)),
          country: pick(['DE', 'FR', '', 'JP']),
          device_type: bot ? 'bot' : pick(['mobile', 'desktop', 'tablet']),
          os: '',
          browser: '',
          referrer: pick(['', 'example.com', 'ex\tample']),
          language: pick(['de', 'fr-CH', '']),
          provider: pick(['', 'Telekom']),
          asn: 3320,
          is_bot: bot ? 1 : 0,
          matched_rule: -1,
        };
      });
    // Today's scans (pending), and scans of earlier days arriving now (a replay, an import).
    const batches = [
      events(300, 0, [today, yesterday, '2026-03-02']),
      events(500, 300, [today, today, today, yesterday]),
      events(200, 800, [today, '2026-03-01', '2025-12-30']),
    ];
    const upTo0030 = [scanEvents, scanDaily, scanSpans, importedScans, scanBatch, scanGs1, spanLevels, dailyRollup];

    async function migrate(db: ClickHouseHandle, migrations: ((c: ClickHouseMigrationContext) => string[])[]) {
      const c = { database: db.database, cluster: null, retentionDays: 4000 };
      for (const m of migrations) for (const query of m(c)) await ch.client.command({ query });
    }
    async function insert(db: ClickHouseHandle, i: number) {
      await insertText(ch.client, {
        table: `${db.database}.scan_events`,
        columns: REDIRECT_SCAN_COLUMNS,
        body: batches[i].map((r) => encodeScanRow({ ...r, ...NO_GS1 })).join(''),
        format: 'TabSeparated',
        dedupToken: `batch-${i}`,
      });
    }
    const text = async (sql: string) => (await ch.client.query({ query: sql, format: 'TabSeparated' })).text();
    /** Every span's scans and merged visitors, whatever its rows' pending flag. */
    const spans = (db: ClickHouseHandle, where = '1') =>
      text(`SELECT org_id, scope, dimension, code_id, brand_id, span, start, is_bot, value, sum(scans),
                   uniqCombinedMerge(12)(visitors)
              FROM ${db.database}.scan_spans WHERE ${where} GROUP BY ALL ORDER BY ALL`);

    before(async () => {
      const dbs = await freshDatabases();
      ch = dbs.ch;
      old = { ...ch, database: `${dbs.chDatabase}_a` };
      rolled = { ...ch, database: `${dbs.chDatabase}_b` };
      for (const db of [old, rolled]) {
        await ch.client.command({ query: `CREATE DATABASE ${db.database}` });
        await migrate(db, upTo0030);
      }
      for (const i of [0, 1, 2]) await insert(old, i);
      // Every span of the old rollups is complete: its readers may use them all.
      await ch.client.command({
        query: `CREATE TABLE ${old.database}.scan_span_rolls (day Date) ENGINE = MergeTree ORDER BY day`,
      });
      await ch.client.command({ query: `INSERT INTO ${old.database}.scan_span_rolls VALUES ('2149-01-01')` });
      await insert(rolled, 0);
      await migrate(rolled, [spanRoll]);
      // A batch retried after the migration is stored once.
      for (const i of [1, 2, 1]) await insert(rolled, i);
    });
    after(async () => {
      for (const db of [old, rolled]) await dropClickHouseDatabase(ch, db.database);
    });

    it('starts the record of days rolled at the day before the migration, and drops scan_daily', async () => {
      expect(await text(`SELECT toString(max(day)) FROM ${rolled.database}.scan_span_rolls`)).to.equal(
        `${yesterday}\n`,
      );
      expect(await text(`EXISTS TABLE ${rolled.database}.scan_daily`)).to.equal('0\n');
    });

    it("writes today's scans as pending one-day spans only, and an earlier day's into every span length at once", async () => {
      const pending = await text(
        `SELECT DISTINCT span, toString(start) FROM ${rolled.database}.scan_spans WHERE pending = 1 ORDER BY ALL`,
      );
      expect(pending).to.equal(`0\t${today}\n`);
      // The one-day spans, every day: the same as every migration before wrote.
      expect(await spans(rolled, 'span = 0')).to.equal(await spans(old, 'span = 0'));
      // The longer spans of every other day too; today's miss what came after the migration.
      const notToday = `span > 0 AND NOT (start <= '${today}' AND start + bitShiftLeft(toUInt32(1), span) > '${today}')`;
      expect(await spans(rolled, notToday)).to.equal(await spans(old, notToday));
      expect(await spans(rolled)).to.not.equal(await spans(old));
    });

    it("decides which rows are pending by the UTC day, whatever the server's time zone", async () => {
      // A zone whose date differs from UTC's now: 12 hours behind in the UTC morning, 14 ahead after.
      const zone = new Date().getUTCHours() < 12 ? 'Etc/GMT+12' : 'Etc/GMT-14';
      await ch.client.command({
        query: `INSERT INTO ${rolled.database}.scan_events (scan_id, scanned_at, org_id, brand_id, code_id, visitor_hash)
                SETTINGS session_timezone = '${zone}', insert_deduplication_token = 'zone'
                SELECT concat('zone-', toString(number)),
                       toDateTime64(if(number = 0, '${yesterday}', '${today}') || ' 12:00:00', 3, 'UTC'), 9, 1, 1, number
                  FROM numbers(2)`,
      });
      expect(
        await text(`SELECT toString(start), pending, count() FROM ${rolled.database}.scan_spans
                     WHERE org_id = 9 AND span = 0 AND scope = 'organization' AND dimension = 'total' GROUP BY ALL ORDER BY ALL`),
      ).to.equal(`${yesterday}\t0\t1\n${today}\t1\t1\n`);
      await ch.client.command({ query: `DELETE FROM ${rolled.database}.scan_events WHERE org_id = 9` });
      await ch.client.command({
        query: `ALTER TABLE ${rolled.database}.scan_spans DELETE WHERE org_id = 9 SETTINGS mutations_sync = 1`,
      });
    });

    it('gives the same answers before the roll as every migration before, reading one-day spans for the days not rolled', async () => {
      const filters: RollupFilter[] = [
        { orgId: 1, from: dayOf(Date.now() - 89 * DAY_MS), to: today },
        { orgId: 1, from: '2025-12-01', to: today, brandId: 1, includeBots: true },
        { orgId: 2, from: dayOf(Date.now() - 6 * DAY_MS), to: today, codeId: 5 },
        // The 16 aligned days that hold today: one 16-day span if every day counted as rolled, whose
        // today is missing the scans stored after the migration (still pending).
        { orgId: 1, from: dayOf(aligned16), to: dayOf(aligned16 + 15 * DAY_MS) },
      ];
      for (const f of filters) {
        const request = { dimension: 'country' as const, children: true, topCodes: 3, dailyBreakdown: true };
        const got = await rollupReport(rolled, f, request);
        expect(got).to.deep.equal(await rollupReport(old, f, request));
        expect(got.totals).to.deep.equal(await rawTotals(rolled, f));
        expect(await rollupDaily(rolled, f)).to.deep.equal(await rollupDaily(old, f));
      }
    });

    it('rolls a day once: every span as every migration before wrote it, the day recorded, a second roll counting nothing twice', async () => {
      await rollDay(rolled, today);
      await rollDay(rolled, today);
      expect(await spans(rolled)).to.equal(await spans(old));
      expect(await text(`SELECT toString(max(day)) FROM ${rolled.database}.scan_span_rolls`)).to.equal(`${today}\n`);
      expect(await rolledThrough(rolled)).to.equal(today);
      // Readers now use the longer spans that end today, with the same answers.
      const f: RollupFilter = { orgId: 1, from: dayOf(Date.now() - 63 * DAY_MS), to: today };
      const request = { dimension: 'language' as const, children: true, dailyBreakdown: false };
      const got = await rollupReport(rolled, f, request);
      expect(got).to.deep.equal(await rollupReport(old, f, request));
      expect(got.totals).to.deep.equal(await rawTotals(rolled, f));
    });

    it('rolls every finished day after the last one rolled, in order, and records the last', async () => {
      const db: ClickHouseHandle = { ...ch, database: `${rolled.database.replace(/_b$/, '')}_c` };
      await ch.client.command({ query: `CREATE DATABASE ${db.database}` });
      try {
        await migrate(db, [...upTo0030, spanRoll]);
        // As if the roll had last run five days ago.
        await ch.client.command({ query: `TRUNCATE TABLE ${db.database}.scan_span_rolls` });
        const last = dayOf(Date.now() - 5 * DAY_MS);
        await ch.client.command({ query: `INSERT INTO ${db.database}.scan_span_rolls (day) VALUES ('${last}')` });
        const days = await rollFinishedDays(db);
        // At least up to the day before yesterday (yesterday once it has been over for the delay).
        expect(days.slice(0, 3)).to.deep.equal([4, 3, 2].map((n) => dayOf(Date.now() - n * DAY_MS)));
        expect(await text(`SELECT toString(max(day)) FROM ${db.database}.scan_span_rolls`)).to.equal(
          `${days[days.length - 1]}\n`,
        );
        expect(await rollFinishedDays(db)).to.deep.equal([]);
      } finally {
        await dropClickHouseDatabase(ch, db.database);
      }
    });
  });
});
