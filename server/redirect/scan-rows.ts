// The rows the redirect writes: scan_events and orphan_scans (columns defined once, in
// server/analytics/scan-event.ts), their timestamps, and the fast TabSeparated encoding of a scan.
import { clickHouseTime, type OrphanScan, type RedirectScan, type ScanAction } from '../analytics/scan-event.js';
import { tsvText } from './scan-buffer.js';

/** One row of scan_events as the redirect writes it (REDIRECT_SCAN_COLUMNS: a GS1 resolution's dimensions included). */
export type ScanRow = RedirectScan;
/** One row of orphan_scans. */
export type OrphanRow = OrphanScan;
/** One row of scan_actions (an action on a landing page). */
export type ActionRow = ScanAction;

let stampMs = -1;
let stamp = '';

/** scanned_at for a time in ms (the last one is kept: requests share milliseconds). */
export function utcStamp(ms: number): string {
  if (ms !== stampMs) {
    stamp = clickHouseTime(ms);
    stampMs = ms;
  }
  return stamp;
}

/**
 * A scan row as a TabSeparated line in REDIRECT_SCAN_COLUMNS order, written out field by field (the
 * generic tsvLine reads the row through computed keys, which V8 cannot make fast; a unit test keeps
 * the two equal). Text that comes from the request or from data files is escaped (a GS1
 * resolution's key qualifiers and the link type asked for included); the rest is digits, ULIDs and
 * fixed words. A scan that is no GS1 resolution ends in six empty fields.
 */
export function encodeScanRow(r: ScanRow): string {
  return (
    `${r.scan_id}\t${r.scanned_at}\t${r.org_id}\t${r.brand_id}\t${r.domain_id}\t${r.code_id}\t${r.visitor_hash}\t` +
    `${tsvText(r.country)}\t${tsvText(r.device_type)}\t${tsvText(r.os)}\t${tsvText(r.browser)}\t${tsvText(r.referrer)}\t` +
    `${tsvText(r.language)}\t${tsvText(r.provider)}\t${r.asn}\t${r.is_bot}\t${r.matched_rule}\t` +
    `${tsvText(r.gtin)}\t${tsvText(r.cpv)}\t${tsvText(r.lot)}\t${tsvText(r.serial)}\t${tsvText(r.link_type_asked)}\t` +
    `${tsvText(r.link_type_served)}\n`
  );
}
