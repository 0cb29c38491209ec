import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { statements as scanEvents } from '../../clickhouse/0001_scan_events.js';
import { statements as scanDaily } from '../../clickhouse/0002_scan_daily.js';
import { statements as orphanScans } from '../../clickhouse/0003_orphan_scans.js';
import { statements as scanSpans } from '../../clickhouse/0004_scan_spans.js';
import { statements as scanActions } from '../../clickhouse/0008_scan_actions.js';
import { statements as importedScans } from '../../clickhouse/0010_imported_scans.js';
import { statements as gs1Resolutions } from '../../clickhouse/0015_gs1_resolutions.js';
import { statements as scanActionBatch } from '../../clickhouse/0019_scan_action_batch.js';
import { statements as scanGs1 } from '../../clickhouse/0026_scan_gs1_dimensions.js';
import { SPAN_LEVELS, statements as spanLevels } from '../../clickhouse/0029_scan_span_levels.js';
import { statements as dailyRollup } from '../../clickhouse/0030_scan_daily_rollup.js';
import { encodeScanRow } from '../../server/redirect/scan-rows.js';
import { spansOf } from '../../server/analytics/spans.js';
import {
  clickHouseTime,
  GS1_RESOLUTION_SCHEMA,
  NO_GS1,
  REDIRECT_SCAN_COLUMNS,
  ORPHAN_SCAN_SCHEMA,
  SCAN_ACTION_SCHEMA,
  SCAN_EVENT_SCHEMA,
  SCAN_GS1_SCHEMA,
  type ScanEvent,
} from '../../server/analytics/scan-event.js';
import type { ClickHouseMigrationContext } from '../../server/stores/migrate.js';
import { insertText } from '../../server/stores/clickhouse.js';
import { scanRow } from '../helpers/fixtures.js';
import { dropClickHouseDatabase, freshDatabases } from '../helpers/stores.js';
import { waitFor } from '../helpers/poll.js';
import type { ClickHouseHandle } from '../../server/stores/clickhouse.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const flat = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** The columns and types of docs/scan-event-contract.md's table. */
async function contractColumns(): Promise<[string, string][]> {
  const doc = await fs.readFile(path.join(ROOT, 'docs', 'scan-event-contract.md'), 'utf8');
  return [...doc.matchAll(/^\| ([a-z_]+) \| ([A-Za-z0-9(), ']+?) \|/gm)]
    .filter((m) => m[1] !== 'column')
    .map((m) => [m[1], m[2].trim()]);
}

function ddl(ctx: ClickHouseMigrationContext): string[] {
  return [...scanEvents(ctx), ...scanDaily(ctx)].map(flat);
}

describe('ClickHouse DDL (clickhouse/0001_scan_events, 0002_scan_daily)', () => {
  describe('on a single server or chDB (no cluster)', () => {
    const sql = ddl({ database: 'qr', cluster: null, retentionDays: 400 });

    it('creates scan_events as a MergeTree by month, ordered tenant first, with the retention TTL and a deduplication window', () => {
      expect(sql[0]).to.match(/^CREATE TABLE IF NOT EXISTS qr\.scan_events \(/);
      expect(sql[0]).to.include(
        'ENGINE = MergeTree PARTITION BY toYYYYMM(scanned_at) ORDER BY (org_id, code_id, scanned_at, scan_id) ' +
          'TTL toDateTime(scanned_at) + INTERVAL 400 DAY SETTINGS non_replicated_deduplication_window = 10000',
      );
    });

    it('creates scan_daily as an AggregatingMergeTree with scans and a uniq state of the visitor, fed by a materialized view', () => {
      expect(sql[1]).to.include('CREATE TABLE IF NOT EXISTS qr.scan_daily (');
      expect(sql[1]).to.include('scans SimpleAggregateFunction(sum, UInt64)');
      expect(sql[1]).to.include('visitors AggregateFunction(uniqCombined(12), UInt64)');
      expect(sql[1]).to.include(
        'ENGINE = AggregatingMergeTree PARTITION BY toYYYYMM(day) ' +
          'ORDER BY (org_id, scope, dimension, code_id, brand_id, day, is_bot, value) ' +
          'SETTINGS index_granularity = 1024, non_replicated_deduplication_window = 10000',
      );
      expect(sql[2]).to.match(/^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_daily_mv TO qr\.scan_daily AS /);
      expect(sql[2]).to.include(
        'count() AS scans, uniqCombinedState(12)(v) AS visitors FROM ( SELECT org_id, toDate(scanned_at) AS day, ' +
          'brand_id AS b, code_id AS c, is_bot, visitor_hash AS v, country, device_type, referrer, language, provider ' +
          'FROM qr.scan_events )',
      );
      expect(sql[2]).to.include('GROUP BY org_id, scope, dimension, code_id, brand_id, day, is_bot, value');
    });

    it('fans every event out into organization, brand and code rows, each with a total and five dimensions', () => {
      const fanOut = [
        ...sql[2].matchAll(/\('(organization|brand|code)', ([^,]+), ([^,]+), '([a-z]+)', ([^)]*\)?)\)/g),
      ].map((m) => `${m[1]} ${m[2]} ${m[3]} ${m[4]} ${m[5]}`);
      const dims = [
        ['total', "''"],
        ['country', 'toString(country)'],
        ['device', 'toString(device_type)'],
        ['referrer', 'toString(referrer)'],
        ['language', 'toString(language)'],
        ['provider', 'toString(provider)'],
      ];
      const scopes = [
        ['organization', 'toUInt64(0) toUInt64(0)'],
        ['brand', 'b toUInt64(0)'],
        ['code', 'b c'],
      ];
      expect(fanOut).to.deep.equal(scopes.flatMap(([s, ids]) => dims.map(([d, v]) => `${s} ${ids} ${d} ${v}`)));
    });

    it('has no ON CLUSTER, replicated or Distributed table', () => {
      expect(sql).to.have.length(3);
      for (const s of sql) expect(s).not.to.match(/ON CLUSTER|Replicated|Distributed/);
    });

    it('takes the TTL from the retention setting', () => {
      expect(flat(scanEvents({ database: 'qr', cluster: null, retentionDays: 30 })[0])).to.include('INTERVAL 30 DAY');
      expect(() => scanEvents({ database: 'qr', cluster: null, retentionDays: 0 })).to.throw(/retentionDays/);
    });
  });

  describe('with CLICKHOUSE_CLUSTER', () => {
    const sql = ddl({ database: 'qr', cluster: 'analytics', retentionDays: 400 });

    it('runs every statement ON CLUSTER', () => {
      expect(sql).to.have.length(5);
      for (const s of sql) expect(s).to.include(' ON CLUSTER analytics ');
    });

    it('stores raw events in a ReplicatedMergeTree per shard and reads them through a Distributed scan_events', () => {
      expect(sql[0]).to.match(/^CREATE TABLE IF NOT EXISTS qr\.scan_events_local ON CLUSTER analytics \(/);
      expect(sql[0]).to.include(
        "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/qr/scan_events_local', '{replica}') " +
          'PARTITION BY toYYYYMM(scanned_at) ORDER BY (org_id, code_id, scanned_at, scan_id) ' +
          'TTL toDateTime(scanned_at) + INTERVAL 400 DAY SETTINGS replicated_deduplication_window = 10000',
      );
      expect(sql[1]).to.equal(
        'CREATE TABLE IF NOT EXISTS qr.scan_events ON CLUSTER analytics AS qr.scan_events_local ' +
          'ENGINE = Distributed(analytics, qr, scan_events_local, cityHash64(org_id, code_id))',
      );
    });

    it('rolls up per shard (view on the local tables) and reads the rollup through a Distributed scan_daily', () => {
      expect(sql[2]).to.include(
        "ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/qr/scan_daily_local', '{replica}')",
      );
      expect(sql[3]).to.match(
        /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_daily_mv ON CLUSTER analytics TO qr\.scan_daily_local AS /,
      );
      expect(sql[3]).to.include(' FROM qr.scan_events_local ');
      expect(sql[4]).to.equal(
        'CREATE TABLE IF NOT EXISTS qr.scan_daily ON CLUSTER analytics AS qr.scan_daily_local ' +
          'ENGINE = Distributed(analytics, qr, scan_daily_local, cityHash64(org_id, code_id))',
      );
    });
  });

  describe('applied to chDB', () => {
    let ch: ClickHouseHandle;
    before(async () => {
      const dbs = await freshDatabases();
      ch = { ...dbs.ch, database: dbs.chDatabase };
      await ch.client.command({ query: `CREATE DATABASE ${ch.database}` });
      const ctx = { database: ch.database, cluster: null, retentionDays: 400 };
      // Twice: every statement is re-runnable.
      for (let i = 0; i < 2; i++)
        for (const query of [...scanEvents(ctx), ...scanDaily(ctx)]) await ch.client.command({ query });
    });

    it('gives scan_events exactly the columns and types of docs/scan-event-contract.md', async () => {
      const rs = await ch.client.query({
        query:
          'SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position',
        query_params: { db: ch.database, t: 'scan_events' },
        format: 'JSONEachRow',
      });
      const cols = (await rs.json<{ name: string; type: string }>()).map((c) => [c.name, c.type]);
      expect(cols).to.deep.equal(await contractColumns());
    });

    it('counts a batch retried with the same insert_deduplication_token once, in the events and in the rollup', async () => {
      const row = {
        ...scanRow(0, {
          scan_id: '01JQ0000000000000000000001',
          org_id: 1,
          code_id: 5,
          visitor_hash: '42',
          country: 'DE',
          device_type: 'mobile',
          language: 'de',
        }),
        scanned_at: '2026-03-01 10:00:00.000',
      };
      for (let i = 0; i < 2; i++) {
        await insertText(ch.client, {
          table: `${ch.database}.scan_events`,
          body: JSON.stringify(row),
          format: 'JSONEachRow',
          dedupToken: 'batch-1',
        });
      }
      const q = async (sql: string) =>
        // 64-bit integers come as numbers or strings depending on the server version's defaults.
        Number(
          (await (await ch.client.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string | number }>())[0].n,
        );
      expect(await q(`SELECT count() AS n FROM ${ch.database}.scan_events`)).to.equal(1);
      for (const scope of ['organization', 'brand', 'code']) {
        const where = `scope = '${scope}' AND is_bot = 0`;
        expect(
          await q(`SELECT sum(scans) AS n FROM ${ch.database}.scan_daily WHERE ${where} AND dimension = 'total'`),
          scope,
        ).to.equal(1);
        expect(
          await q(
            `SELECT sum(scans) AS n FROM ${ch.database}.scan_daily WHERE ${where} AND dimension = 'country' AND value = 'DE'`,
          ),
          scope,
        ).to.equal(1);
      }
      expect(await q(`SELECT count() AS n FROM ${ch.database}.scan_daily`)).to.equal(18);
    });
  });
});

describe('ClickHouse DDL (clickhouse/0003_orphan_scans)', () => {
  const ctx = (cluster: string | null): ClickHouseMigrationContext => ({ database: 'qr', cluster, retentionDays: 30 });
  const flat = (sql: string) => sql.replace(/\s+/g, ' ').trim();

  it('keeps orphan scans in a MergeTree by month, ordered by host and path, with the TTL and dedup window', () => {
    const [table, ...rest] = orphanScans(ctx(null)).map(flat);
    expect(rest).to.deep.equal([]);
    expect(table).to.match(/^CREATE TABLE IF NOT EXISTS qr\.orphan_scans \(/);
    expect(table).to.include(
      ') ENGINE = MergeTree PARTITION BY toYYYYMM(scanned_at) ORDER BY (host, path, scanned_at, scan_id) ' +
        'TTL toDateTime(scanned_at) + INTERVAL 30 DAY SETTINGS non_replicated_deduplication_window = 10000',
    );
  });

  it('replicates them per shard and reads them through a Distributed table sharded by host', () => {
    const [local, distributed] = orphanScans(ctx('c1')).map(flat);
    expect(local).to.match(/^CREATE TABLE IF NOT EXISTS qr\.orphan_scans_local ON CLUSTER c1 \(/);
    expect(local).to.include(
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/qr/orphan_scans_local', '{replica}')",
    );
    expect(local).to.include('SETTINGS replicated_deduplication_window = 10000');
    expect(distributed).to.equal(
      'CREATE TABLE IF NOT EXISTS qr.orphan_scans ON CLUSTER c1 AS qr.orphan_scans_local ' +
        'ENGINE = Distributed(c1, qr, orphan_scans_local, cityHash64(host))',
    );
  });
});

describe('ClickHouse DDL (clickhouse/0008_scan_actions)', () => {
  it('keeps landing-page actions in a MergeTree by month, ordered tenant and code first, with the columns of SCAN_ACTION_SCHEMA', () => {
    const [table, ...rest] = scanActions({ database: 'qr', cluster: null, retentionDays: 400 });
    expect(rest).to.deep.equal([]);
    expect(table).to.include('ORDER BY (org_id, code_id, scanned_at, action_id)');
    expect(table).to.include('TTL toDateTime(scanned_at) + INTERVAL 400 DAY');
    const cols = [...table.matchAll(/^\s+([a-z_]+) (.+?),?$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(cols)).to.deep.equal(SCAN_ACTION_SCHEMA);
  });
});

describe('ClickHouse DDL (clickhouse/0019_scan_action_batch)', () => {
  it('gives scan_actions the batch token of its insert (the live stream reads batches back by it), locally and on a cluster', () => {
    expect(scanActionBatch({ database: 'qr', cluster: null, retentionDays: 400 }).map(flat)).to.deep.equal([
      "ALTER TABLE qr.scan_actions ADD COLUMN IF NOT EXISTS batch String DEFAULT getSetting('insert_deduplication_token')",
      'ALTER TABLE qr.scan_actions ADD INDEX IF NOT EXISTS scan_actions_batch batch TYPE bloom_filter(0.001) GRANULARITY 1',
    ]);
    const cluster = scanActionBatch({ database: 'qr', cluster: 'c1', retentionDays: 400 }).map(flat);
    expect(cluster).to.have.length(3);
    expect(cluster[0]).to.match(/^ALTER TABLE qr\.scan_actions_local ON CLUSTER c1 ADD COLUMN/);
    expect(cluster[1]).to.match(/^ALTER TABLE qr\.scan_actions ON CLUSTER c1 ADD COLUMN/);
    expect(cluster[2]).to.match(/^ALTER TABLE qr\.scan_actions_local ON CLUSTER c1 ADD INDEX/);
  });
});

describe('ClickHouse DDL (clickhouse/0015_gs1_resolutions)', () => {
  it('keeps GS1 resolutions in a MergeTree by month, ordered tenant and GTIN first, with the columns of GS1_RESOLUTION_SCHEMA', () => {
    const [table, ...rest] = gs1Resolutions({ database: 'qr', cluster: null, retentionDays: 400 });
    expect(rest).to.deep.equal([]);
    expect(table).to.include('ORDER BY (org_id, gtin, scanned_at, scan_id)');
    expect(table).to.include('TTL toDateTime(scanned_at) + INTERVAL 400 DAY');
    const cols = [...table.matchAll(/^\s+([a-z_]+) (.+?),?$/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(cols)).to.deep.equal(GS1_RESOLUTION_SCHEMA);
  });
});

describe('ClickHouse DDL (clickhouse/0026_scan_gs1_dimensions)', () => {
  /** [name, type] of the columns an ALTER TABLE statement adds, with their defaults. */
  const added = (sql: string) => [...sql.matchAll(/ADD COLUMN IF NOT EXISTS ([a-z_]+) (.+?) DEFAULT ''/g)];

  it("adds the columns of SCAN_GS1_SCHEMA to scan_events, each DEFAULT '' (rows written before keep ''), and nothing else", () => {
    const [alter, ...rest] = scanGs1({ database: 'qr', cluster: null, retentionDays: 400 });
    expect(rest).to.deep.equal([]);
    expect(alter).to.match(/^ALTER TABLE qr\.scan_events\n/);
    expect(Object.fromEntries(added(alter).map((m) => [m[1], m[2]]))).to.deep.equal(SCAN_GS1_SCHEMA);
    expect(alter.split('ADD COLUMN')).to.have.length(Object.keys(SCAN_GS1_SCHEMA).length + 1);
  });

  it('on a cluster alters the local tables and the Distributed table alike', () => {
    const sql = scanGs1({ database: 'qr', cluster: 'c1', retentionDays: 400 }).map(flat);
    expect(sql).to.have.length(2);
    expect(sql[0]).to.match(/^ALTER TABLE qr\.scan_events_local ON CLUSTER c1 ADD COLUMN/);
    expect(sql[1]).to.match(/^ALTER TABLE qr\.scan_events ON CLUSTER c1 ADD COLUMN/);
    for (const s of sql) expect(added(s).map((m) => m[1])).to.deep.equal(Object.keys(SCAN_GS1_SCHEMA));
  });
});

describe('ClickHouse DDL (clickhouse/0004_scan_spans)', () => {
  const ctx = (cluster: string | null): ClickHouseMigrationContext => ({ database: 'qr', cluster, retentionDays: 400 });

  it('keeps spans in an AggregatingMergeTree by year, ordered scope and dimension first, then is_bot, span, start and the ids', () => {
    const [table, view, backfill, ...rest] = scanSpans(ctx(null)).map(flat);
    expect(rest).to.deep.equal([]);
    expect(table).to.match(/^CREATE TABLE IF NOT EXISTS qr\.scan_spans \(/);
    expect(table).to.include('span UInt8, start Date, value String, scans SimpleAggregateFunction(sum, UInt64)');
    expect(table).to.include('visitors AggregateFunction(uniqCombined(12), UInt64)');
    expect(table).to.include(
      ') ENGINE = AggregatingMergeTree PARTITION BY toYear(start) ' +
        'ORDER BY (org_id, scope, dimension, is_bot, span, start, code_id, brand_id, value) ' +
        'SETTINGS index_granularity = 256, index_granularity_bytes = 65536, non_replicated_deduplication_window = 10000',
    );
    expect(view).to.match(/^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_mv TO qr\.scan_spans AS SELECT /);
    // Each daily row copied into its seven spans as it is, no aggregation on the insert path.
    expect(view).to.match(/ value, scans, visitors FROM qr\.scan_daily ARRAY JOIN range\(toUInt8\(7\)\) AS span$/);
    expect(backfill).to.match(
      /^INSERT INTO qr\.scan_spans SETTINGS async_insert = 0 SELECT .* FROM qr\.scan_daily ARRAY JOIN/,
    );
    for (const s of [table, view, backfill]) expect(s).not.to.match(/ON CLUSTER|Replicated|Distributed/);
  });

  it('on a cluster rolls up per shard from scan_daily_local and fills the rollup once through the Distributed tables', () => {
    const [table, view, distributed, backfill] = scanSpans(ctx('c1')).map(flat);
    expect(table).to.match(/^CREATE TABLE IF NOT EXISTS qr\.scan_spans_local ON CLUSTER c1 \(/);
    expect(table).to.include(
      "ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/qr/scan_spans_local', '{replica}')",
    );
    expect(table).to.include('replicated_deduplication_window = 10000');
    expect(view).to.match(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_mv ON CLUSTER c1 TO qr\.scan_spans_local AS /,
    );
    expect(view).to.include(' FROM qr.scan_daily_local ');
    expect(distributed).to.equal(
      'CREATE TABLE IF NOT EXISTS qr.scan_spans ON CLUSTER c1 AS qr.scan_spans_local ' +
        'ENGINE = Distributed(c1, qr, scan_spans_local, cityHash64(org_id, code_id))',
    );
    expect(backfill).to.match(
      /^INSERT INTO qr\.scan_spans SETTINGS async_insert = 0 SELECT .* FROM qr\.scan_daily ARRAY JOIN/,
    );
  });

  it('0029 keeps spans of 1, 4, 16 and 64 days: the view copies each daily row into those four and the others are deleted, per shard on a cluster', () => {
    const [drop, view, del, ...rest] = spanLevels(ctx(null)).map(flat);
    expect(rest).to.deep.equal([]);
    expect(drop).to.equal('DROP VIEW IF EXISTS qr.scan_spans_mv');
    expect(view).to.match(/^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_mv TO qr\.scan_spans AS SELECT /);
    expect(view).to.match(/ FROM qr\.scan_daily ARRAY JOIN CAST\(\[0, 2, 4, 6\] AS Array\(UInt8\)\) AS span$/);
    expect(del).to.equal('ALTER TABLE qr.scan_spans DELETE WHERE span NOT IN (0, 2, 4, 6)');
    const [cdrop, cview, cdel] = spanLevels(ctx('c1')).map(flat);
    expect(cdrop).to.equal('DROP VIEW IF EXISTS qr.scan_spans_mv ON CLUSTER c1');
    expect(cview).to.match(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_spans_mv ON CLUSTER c1 TO qr\.scan_spans_local AS /,
    );
    expect(cview).to.include(' FROM qr.scan_daily_local ');
    expect(cdel).to.equal('ALTER TABLE qr.scan_spans_local ON CLUSTER c1 DELETE WHERE span NOT IN (0, 2, 4, 6)');
  });

  describe('applied to chDB after scans were rolled up, then 0029 (spans of 1, 4, 16 and 64 days)', () => {
    let ch: ClickHouseHandle;
    const ORG = 7;
    const DAY_MS = 86_400_000;
    const FIRST = Date.parse('2026-01-01T00:00:00.000Z');
    // Deterministic scans over 120 days: 4 codes in 2 brands (code 4 unbranded), 300 visitors.
    let seed = 1;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const events = (n: number, from: number) =>
      Array.from({ length: n }, (_, i) => {
        const code = 1 + Math.floor(next() * 4);
        const at = FIRST + Math.floor(next() * 120 * DAY_MS);
        const row = scanRow(at, {
          scan_id: `01JQ${String(from + i).padStart(22, '0')}`,
          org_id: ORG,
          brand_id: code === 4 ? 0 : code <= 2 ? 1 : 2,
          code_id: code,
          visitor_hash: String(1 + Math.floor(next() * 300)),
          country: ['DE', 'FR', 'US', 'GB'][Math.floor(next() * 4)],
          device_type: next() < 0.1 ? 'bot' : 'mobile',
          language: 'de',
        });
        return { ...row, scanned_at: clickHouseTime(at), is_bot: row.device_type === 'bot' ? 1 : 0 };
      });
    const insert = (rows: object[], token: string) =>
      insertText(ch.client, {
        table: `${ch.database}.scan_events`,
        body: rows.map((r) => JSON.stringify(r)).join('\n'),
        format: 'JSONEachRow',
        dedupToken: token,
      });
    const query = async <T>(sql: string, params: Record<string, unknown>): Promise<T[]> =>
      (await ch.client.query({ query: sql, query_params: params, format: 'JSONEachRow' })).json<T>();

    before(async () => {
      const dbs = await freshDatabases();
      ch = { ...dbs.ch, database: dbs.chDatabase };
      await ch.client.command({ query: `CREATE DATABASE ${ch.database}` });
      const c = { database: ch.database, cluster: null, retentionDays: 4000 };
      for (const q of [...scanEvents(c), ...scanDaily(c)]) await ch.client.command({ query: q });
      // Scans from before the migration (the backfill), then after it (0004's view), then after 0029
      // (its view), one batch retried.
      await insert(events(1500, 0), 'before');
      for (const q of scanSpans(c)) await ch.client.command({ query: q });
      const later = events(1500, 1500);
      await insert(later.slice(0, 700), 'after-1');
      for (const q of spanLevels(c)) await ch.client.command({ query: q });
      await insert(later.slice(700), 'after-2');
      await insert(later.slice(700), 'after-2');
    });

    /** [value, scans, uniques] of one scope and dimension from scan_daily day by day, and from the covering spans. */
    async function both(where: string, params: Record<string, unknown>, from: string, to: string) {
      const covering = spansOf(from, to, to)
        .map((s) => `(span = ${s.span} AND start = '${s.start}')`)
        .join(' OR ');
      const per = (table: string, range: string) =>
        query<{ value: string; scans: string; uniques: string }>(
          `SELECT value, sum(scans) AS scans, uniqCombinedMerge(12)(visitors) AS uniques FROM ${ch.database}.${table}
            WHERE org_id = {org:UInt64} AND ${where} AND (${range}) GROUP BY value ORDER BY value`,
          { ...params, org: ORG, from, to },
        );
      return {
        daily: await per('scan_daily', 'day >= {from:Date} AND day <= {to:Date}'),
        spans: await per('scan_spans', covering),
      };
    }

    const scopes: [string, string, Record<string, unknown>][] = [
      ['organization', "scope = 'organization' AND brand_id = 0 AND code_id = 0", {}],
      ['brand 1', "scope = 'brand' AND brand_id = {brand:UInt64} AND code_id = 0", { brand: 1 }],
      ['no brand', "scope = 'brand' AND brand_id = 0 AND code_id = 0", {}],
      ['code 3', "scope = 'code' AND code_id = {code:UInt64}", { code: 3 }],
    ];
    for (const [name, where, params] of scopes) {
      it(`gives the ${name} the same scans and distinct visitors per dimension value from spans as from days, for ranges of 1 to 120 days`, async () => {
        let compared = 0;
        for (const [from, to] of [
          ['2026-01-01', '2026-04-30'],
          ['2026-02-01', '2026-03-02'],
          ['2026-03-03', '2026-03-09'],
          ['2026-01-17', '2026-04-16'],
          ['2026-02-10', '2026-02-10'],
        ]) {
          for (const dimension of ['total', 'country', 'device']) {
            for (const bots of ['is_bot = 0', '1']) {
              const r = await both(`${where} AND dimension = '${dimension}' AND ${bots}`, params, from, to);
              const what = `${from}..${to} ${dimension} ${bots}`;
              // Scans are exact. Distinct visitors are uniqCombined estimates: merged in another
              // order near the size where the exact set turns into a sketch, they may differ by the
              // estimator's error (docs/analytics.md: within 1-2%), never more.
              expect(
                r.spans.map((x) => [x.value, x.scans]),
                what,
              ).to.deep.equal(r.daily.map((x) => [x.value, x.scans]));
              r.spans.forEach((x, i) =>
                expect(Math.abs(Number(x.uniques) - Number(r.daily[i].uniques)), `${what} ${x.value}`).to.be.at.most(
                  Math.max(2, Number(r.daily[i].uniques) * 0.03),
                ),
              );
              compared += r.daily.length;
            }
          }
        }
        expect(compared).to.be.above(50);
      });
    }

    it('counts every scan once in every span length kept (before either migration, between them, after both, a retried batch once) and deletes the others', async () => {
      const spans = () =>
        query<{ span: number; scans: string }>(
          `SELECT span, sum(scans) AS scans FROM ${ch.database}.scan_spans
            WHERE org_id = {org:UInt64} AND scope = 'organization' AND dimension = 'total' GROUP BY span ORDER BY span`,
          { org: ORG },
        ).then((rows) => rows.map((r) => [Number(r.span), Number(r.scans)]));
      // 0029's delete of the 2, 8 and 32-day spans is a mutation that runs in the background.
      const rows = await waitFor(spans, (r) => r.length === SPAN_LEVELS.length);
      expect(rows).to.deep.equal(SPAN_LEVELS.map((span) => [span, 3000]));
    });
  });
});

describe('released ClickHouse migrations are frozen text', () => {
  // SHA-256 of each migration's statements (joined by '\n;\n') when it was released; a change to
  // a released migration's DDL fails here. New DDL goes into a new migration instead.
  const RELEASED: [string, (ctx: ClickHouseMigrationContext) => string[], string, string][] = [
    [
      '0001_scan_events',
      scanEvents,
      '508f080c207a184cf078dc4c24c133c29c5cb9b08e2136578f54d98b30520d4a',
      'e802ea0fb7108a60eab49eb405867453ba9b6f98dbc18c3d95b293f304c6ac2c',
    ],
    [
      '0002_scan_daily',
      scanDaily,
      '023aaa330a8a74a6b23549c2ab59552591288c9073f381f3b7f41ea3f6848b8f',
      'acbbe9b6ed08f0a77165542310a3bab26e35b6ae692d4ee7aa30bf5d9715841e',
    ],
    [
      '0003_orphan_scans',
      orphanScans,
      '8d1e387a090a7068e2cb4ba2b73a3aeb568ad896cd4fe1c0cd9e307cc1517ac5',
      'c4a83fe089a539a83b3e9990327ea8f3c6c938a329575d134eb9c343d1b502a4',
    ],
    [
      '0004_scan_spans',
      scanSpans,
      '2a1fbc0f8e1f5a2254b95fbc14c3dfc87e5995e6780ca624fc1bd36ff87ea7ea',
      'f3e4cba3accbd7199f4bb0ef109e749b3e7c95c03cb394389acd47010d4a4e3a',
    ],
    [
      '0008_scan_actions',
      scanActions,
      'eb301eb1648053a13dd10982952ee7aea866a57df0111781f5a3fed62ae14917',
      '9b6376cf07de8280dd472c7cc827c83d19befc153886eb6e489c0ce2f2aaf817',
    ],
    [
      '0010_imported_scans',
      importedScans,
      '7506df1462332815a9aaebf5c5d75e2857dba99d56d5fdd791fa121a28e0096d',
      'e60aa8d526d529abd3499d43a631cd604b6d5e2b1e0b2e2f544da3fbfc19bae5',
    ],
  ];
  const sha = (sql: string[]) => crypto.createHash('sha256').update(sql.join('\n;\n')).digest('hex');

  for (const [name, statements, single, cluster] of RELEASED) {
    it(`produces the DDL ${name} produced when it was released, on one server and on a cluster`, () => {
      expect(sha(statements({ database: 'qr', cluster: null, retentionDays: 400 }))).to.equal(single);
      expect(sha(statements({ database: 'analytics', cluster: 'main', retentionDays: 30 }))).to.equal(cluster);
    });
  }

  /** [name, type] of the columns a CREATE TABLE statement declares. */
  function declared(sql: string): [string, string][] {
    const body = sql.slice(sql.indexOf('(') + 1, sql.indexOf('\n)\nENGINE'));
    return body
      .split(',\n')
      .map((line) => line.trim())
      .map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]);
  }

  it('declares in 0001 exactly the columns of the live scan event definition (server/analytics/scan-event.ts)', () => {
    const [table] = scanEvents({ database: 'qr', cluster: null, retentionDays: 400 });
    expect(declared(table)).to.deep.equal(Object.entries(SCAN_EVENT_SCHEMA));
  });

  it('declares in 0003 exactly the columns of the live orphan scan definition', () => {
    const [table] = orphanScans({ database: 'qr', cluster: null, retentionDays: 400 });
    expect(declared(table)).to.deep.equal(Object.entries(ORPHAN_SCAN_SCHEMA));
  });
});

describe('ClickHouse DDL (clickhouse/0030_scan_daily_rollup)', () => {
  const ctx = (cluster: string | null): ClickHouseMigrationContext => ({ database: 'qr', cluster, retentionDays: 400 });

  it('replaces the fan-out view by one that copies each scan per dimension and rolls the code scope up into brand and organization', () => {
    const [drop, view, ...rest] = dailyRollup(ctx(null)).map(flat);
    expect(rest).to.deep.equal([]);
    expect(drop).to.equal('DROP VIEW IF EXISTS qr.scan_daily_mv');
    expect(view).to.match(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_daily_rollup_mv TO qr\.scan_daily AS SELECT /,
    );
    expect(view).to.include(' FROM qr.scan_events ARRAY JOIN [');
    expect(view).to.include(' GROUP BY ROLLUP(k, brand_id, code_id) HAVING grouping(k) = 0 ');
  });

  it('on a cluster replaces the view per shard', () => {
    const sql = dailyRollup(ctx('c1')).map(flat);
    expect(sql).to.have.length(2);
    expect(sql[0]).to.equal('DROP VIEW IF EXISTS qr.scan_daily_mv ON CLUSTER c1');
    expect(sql[1]).to.match(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS qr\.scan_daily_rollup_mv ON CLUSTER c1 TO qr\.scan_daily_local /,
    );
    expect(sql[1]).to.include(' FROM qr.scan_events_local ');
  });

  describe('applied to chDB', () => {
    let ch: ClickHouseHandle;
    let fanOut: string;
    let rolled: string;
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const pick = <T>(xs: T[]): T => xs[Math.floor(next() * xs.length)];
    // Varied scans over three days, two organizations, branded and unbranded codes, bots, empty values.
    const events = (n: number, from: number): ScanEvent[] =>
      Array.from({ length: n }, (_, i) => {
        const code = 1 + Math.floor(next() * 6);
        const bot = next() < 0.15;
        return {
          scan_id: `01JR${String(from + i).padStart(22, '0')}`,
          scanned_at: `2026-03-0${1 + Math.floor(next() * 3)} ${String(Math.floor(next() * 24)).padStart(2, '0')}:00:00.000`,
          org_id: code <= 4 ? 1 : 2,
          brand_id: code === 4 ? 0 : 1 + (code % 2),
          domain_id: 0,
          code_id: code,
          visitor_hash: String(1 + Math.floor(next() * 200)),
          country: pick(['DE', 'FR', '', 'JP']),
          device_type: bot ? 'bot' : pick(['mobile', 'desktop', 'tablet']),
          os: pick(['iOS', 'Android', '']),
          browser: pick(['Safari', '']),
          referrer: pick(['', 'example.com', 'news.example.org', 'ex\tample']),
          language: pick(['de', 'fr-CH', '']),
          provider: pick(['', 'Telekom', 'Orange']),
          asn: 3320,
          is_bot: bot ? 1 : 0,
          matched_rule: pick([-1, 0, 2]),
        };
      });
    const batches = [events(400, 0), events(600, 400), events(50, 1000)];

    before(async () => {
      const dbs = await freshDatabases();
      ch = dbs.ch;
      fanOut = `${dbs.chDatabase}_a`;
      rolled = `${dbs.chDatabase}_b`;
      for (const [db, migrations] of [
        [fanOut, [scanEvents, scanGs1, scanDaily, scanSpans, spanLevels]],
        [rolled, [scanEvents, scanGs1, scanDaily, scanSpans, spanLevels, dailyRollup, dailyRollup]],
      ] as const) {
        await ch.client.command({ query: `CREATE DATABASE ${db}` });
        const c = { database: db, cluster: null, retentionDays: 4000 };
        for (const m of migrations) for (const query of m(c)) await ch.client.command({ query });
        // The redirect's TabSeparated and the generators' JSON, one batch retried.
        for (const [i, rows] of [...batches.entries(), [1, batches[1]] as const]) {
          await insertText(ch.client, {
            table: `${db}.scan_events`,
            columns: i === 0 ? REDIRECT_SCAN_COLUMNS : undefined,
            body:
              i === 0
                ? rows.map((r) => encodeScanRow({ ...r, ...NO_GS1 })).join('')
                : rows.map((r) => JSON.stringify(r)).join('\n'),
            format: i === 0 ? 'TabSeparated' : 'JSONEachRow',
            dedupToken: `batch-${i}`,
          });
        }
      }
    });
    after(async () => {
      for (const db of [fanOut, rolled]) await dropClickHouseDatabase(ch, db);
    });

    const rows = async (sql: string) => (await ch.client.query({ query: sql, format: 'TabSeparated' })).text();

    it('writes the same daily rollup and spans as the fan-out view did, a retried batch once', async () => {
      for (const [table, key] of [
        ['scan_daily', 'day'],
        ['scan_spans', 'span, start'],
      ]) {
        const read = (db: string) =>
          rows(`SELECT org_id, scope, dimension, code_id, brand_id, ${key}, is_bot, value, sum(scans),
                       uniqCombinedMerge(12)(visitors)
                  FROM ${db}.${table} GROUP BY ALL ORDER BY ALL`);
        const got = await read(rolled);
        expect(got.trim().split('\n').length, table).to.be.greaterThan(100);
        expect(got, table).to.equal(await read(fanOut));
      }
      const total = await rows(
        `SELECT sum(scans) FROM ${rolled}.scan_daily WHERE scope = 'organization' AND dimension = 'total'`,
      );
      expect(total.trim()).to.equal('1050');
    });
  });
});
