// The one definition of the scan event: the columns of ClickHouse's scan_events, in insert order,
// with their ClickHouse types. It is the contract between the redirect (writer) and analytics
// (reader), docs/scan-event-contract.md. Everything else is derived from it: the ScanEvent row type,
// the column order of the redirect's inserts, the raw export's row type; clickhouse/0001 (frozen
// migration text) and the contract document are checked against it by test/unit/clickhouse-ddl.
export const SCAN_EVENT_SCHEMA = {
  scan_id: 'String',
  scanned_at: "DateTime64(3, 'UTC')",
  org_id: 'UInt64',
  brand_id: 'UInt64',
  domain_id: 'UInt64',
  code_id: 'UInt64',
  visitor_hash: 'UInt64',
  country: 'LowCardinality(String)',
  device_type: 'LowCardinality(String)',
  os: 'LowCardinality(String)',
  browser: 'LowCardinality(String)',
  referrer: 'String',
  language: 'LowCardinality(String)',
  provider: 'LowCardinality(String)',
  asn: 'UInt32',
  is_bot: 'UInt8',
  matched_rule: 'Int16',
} as const;

/** Requests for an unknown or inactive slug on a host we serve (orphan_scans, clickhouse/0003). */
export const ORPHAN_SCAN_SCHEMA = {
  scan_id: 'String',
  scanned_at: "DateTime64(3, 'UTC')",
  org_id: 'UInt64',
  domain_id: 'UInt64',
  host: 'String',
  path: 'String',
  reason: 'LowCardinality(String)',
  visitor_hash: 'UInt64',
  country: 'LowCardinality(String)',
  device_type: 'LowCardinality(String)',
  referrer: 'String',
  is_bot: 'UInt8',
} as const;

/** What a visitor did on a landing page (scan_actions, clickhouse/0008). */
export const SCAN_ACTION_SCHEMA = {
  action_id: 'String',
  scanned_at: "DateTime64(3, 'UTC')",
  org_id: 'UInt64',
  brand_id: 'UInt64',
  domain_id: 'UInt64',
  code_id: 'UInt64',
  action: 'LowCardinality(String)',
  target: 'UInt16',
  visitor_hash: 'UInt64',
  is_bot: 'UInt8',
} as const;

/**
 * The GS1 dimensions of a scan (columns of scan_events added by clickhouse/0026, '' for every scan
 * but a GS1 Digital Link resolution, docs/gs1.md): the GTIN-14, its key qualifiers, the link type
 * asked for (`linkType`, `linkset` for a linkset asked by Accept) and served ('' for a 404). The
 * redirect writes them after the contract's columns (REDIRECT_SCAN_COLUMNS); they are not fields of
 * the scan event contract (the raw export does not read them).
 */
export const SCAN_GS1_SCHEMA = {
  gtin: 'LowCardinality(String)',
  cpv: 'LowCardinality(String)',
  lot: 'String',
  serial: 'String',
  link_type_asked: 'LowCardinality(String)',
  link_type_served: 'LowCardinality(String)',
} as const;

/**
 * What a GS1 Digital Link resolution asked and served, as a version before clickhouse/0026 wrote it:
 * a row of its own in gs1_resolutions (clickhouse/0015) beside the scan, under the scan's scan_id.
 * Nothing writes it now but the replay of the journals and spill files such a version left; its
 * rows are still read by the GS1 analytics (server/analytics/queries.ts).
 */
export const GS1_RESOLUTION_SCHEMA = {
  scan_id: 'String',
  scanned_at: "DateTime64(3, 'UTC')",
  org_id: 'UInt64',
  brand_id: 'UInt64',
  domain_id: 'UInt64',
  code_id: 'UInt64',
  gtin: 'String',
  cpv: 'String',
  lot: 'String',
  serial: 'String',
  link_type_asked: 'LowCardinality(String)',
  link_type_served: 'LowCardinality(String)',
  visitor_hash: 'UInt64',
  is_bot: 'UInt8',
} as const;

type Schema = Record<string, string>;

/**
 * The JavaScript value of a column: text for String types; `Time` for scanned_at (the redirect
 * carries the text DateTime64(3) reads, '2026-11-22 07:15:00.123'; generators of test and demo data
 * carry epoch milliseconds); visitor_hash as a decimal string (JSON numbers lose precision above
 * 2^53); is_bot 0 or 1; other integers as numbers.
 */
type ColumnValue<Name, Type, Time> = Name extends 'scanned_at'
  ? Time
  : Name extends 'visitor_hash'
    ? string
    : Name extends 'is_bot'
      ? 0 | 1
      : Type extends 'String' | 'LowCardinality(String)'
        ? string
        : number;

type RowOf<S extends Schema, Time = string> = {
  -readonly [C in keyof S]: ColumnValue<C, S[C], Time>;
};

/** One row of scan_events. */
export type ScanEvent<Time = string> = RowOf<typeof SCAN_EVENT_SCHEMA, Time>;
/** One row of orphan_scans; `reason` is one of two words. */
export type OrphanScan = Omit<RowOf<typeof ORPHAN_SCAN_SCHEMA>, 'reason'> & { reason: 'unknown' | 'inactive' };

/** One row of scan_actions: `action` is a landing-page action, `target` the link's index (0 otherwise). */
export type ScanAction = RowOf<typeof SCAN_ACTION_SCHEMA>;
/** The GS1 dimensions of a scan ('' for a scan that is no GS1 resolution). */
export type ScanGs1 = RowOf<typeof SCAN_GS1_SCHEMA>;
/** One row of scan_events as the redirect writes it: the contract's columns, then the GS1 dimensions. */
export type RedirectScan = ScanEvent & ScanGs1;
/** The GS1 dimensions of every scan that is no GS1 resolution. */
export const NO_GS1: Readonly<ScanGs1> = {
  gtin: '',
  cpv: '',
  lot: '',
  serial: '',
  link_type_asked: '',
  link_type_served: '',
};

/** Column names in insert order. */
export const SCAN_EVENT_COLUMNS = Object.keys(SCAN_EVENT_SCHEMA) as readonly (keyof ScanEvent)[];
export const ORPHAN_SCAN_COLUMNS = Object.keys(ORPHAN_SCAN_SCHEMA) as readonly (keyof OrphanScan)[];
export const SCAN_ACTION_COLUMNS = Object.keys(SCAN_ACTION_SCHEMA) as readonly (keyof ScanAction)[];
export const GS1_RESOLUTION_COLUMNS = Object.keys(GS1_RESOLUTION_SCHEMA) as readonly string[];
/**
 * The columns of the redirect's scan_events rows, in insert order. A version before clickhouse/0026
 * wrote SCAN_EVENT_COLUMNS only: its journals and spill files are replayed with those.
 */
export const REDIRECT_SCAN_COLUMNS = [
  ...SCAN_EVENT_COLUMNS,
  ...(Object.keys(SCAN_GS1_SCHEMA) as (keyof ScanGs1)[]),
] as readonly (keyof RedirectScan)[];

/** The text DateTime64(3) reads: '2024-01-02 03:04:05.678' (UTC). */
export function clickHouseTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace('T', ' ');
}
