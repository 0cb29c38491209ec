// One row of scan_events, the contract between the redirect (writer) and analytics (reader):
// docs/scan-event-contract.md. The redirect carries `scanned_at` as the text DateTime64(3) reads
// ('2026-11-22 07:15:00.123'); generators of test and demo data carry epoch milliseconds.
export interface ScanEvent<Time = string> {
  scan_id: string;
  scanned_at: Time;
  org_id: number;
  brand_id: number;
  domain_id: number;
  code_id: number;
  /** UInt64 as a decimal string (JSON numbers lose precision above 2^53). */
  visitor_hash: string;
  country: string;
  device_type: string;
  os: string;
  browser: string;
  referrer: string;
  language: string;
  provider: string;
  asn: number;
  is_bot: 0 | 1;
  matched_rule: number;
}
