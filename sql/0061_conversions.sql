-- Conversions (server/conversions/): what a scan led to, reported by the destination's owner with the
-- scan id the redirect passed on (qr_scan, when the code's conversion_tracking is on). Recorded once
-- per (scan, event, external id): a retried report finds the first one.

alter table qr_codes add column conversion_tracking boolean not null default false;

create table conversions (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  code_id bigint not null references qr_codes (id) on delete cascade,
  brand_id bigint references brands (id) on delete set null,
  scan_id text not null,
  scanned_at timestamptz not null,
  -- The scan's visitor hash (ClickHouse UInt64, as text): unique visitors of conversions.
  visitor_hash text not null,
  event text not null,
  external_id text not null default '',
  amount_minor bigint check (amount_minor >= 0),
  currency text,
  created_at timestamptz not null,
  check ((amount_minor is null) = (currency is null))
);
create unique index conversions_once on conversions (org_id, scan_id, event, external_id);
create index conversions_org_created on conversions (org_id, created_at);
