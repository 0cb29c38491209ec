-- The scan's dimension values on its conversion (server/conversions/), copied from the scan event
-- when the conversion is recorded, so the analytics export can put conversions beside the scans of
-- the same day and country, device type, referrer, language or provider without a second store.
-- Conversions recorded before this migration have '' (shown as Unknown / Direct).

alter table conversions
  add column country text not null default '',
  add column device_type text not null default '',
  add column referrer text not null default '',
  add column language text not null default '',
  add column provider text not null default '';

-- The per-code conversions export reads one code's conversions in (created_at, ulid) order.
create index conversions_code_created on conversions (org_id, code_id, created_at, ulid);
