-- Scan anomaly alerts (server/alerts/): codes opt in through settings.scan_alerts, their own or
-- their brand's (brands.settings), and the daily job records each alert it sends, once per code,
-- day and kind, so a job run twice sends nothing twice.
alter table qr_codes add column settings jsonb not null default '{}';

create table scan_alerts (
  org_id bigint not null references organizations (id) on delete cascade,
  code_id bigint not null references qr_codes (id) on delete cascade,
  day date not null,
  kind text not null check (kind in ('dropped', 'spiked')),
  observed bigint not null,
  baseline double precision not null,
  created_at timestamptz not null,
  primary key (code_id, day, kind)
);
create index scan_alerts_org on scan_alerts (org_id, day);
