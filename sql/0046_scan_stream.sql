-- The live scan stream (GET /v1/scans/stream, docs/stream.md).
--
-- scan_stream_batches: one row per scan batch stored in ClickHouse, written by the process that
-- stored it right after the insert, under a transaction advisory lock so that seq order is commit
-- order; the same transaction NOTIFYs `scan_stream`. Every API process (on every machine) reads the
-- new rows in seq order and the batch's rows from ClickHouse by token (scan_events.batch,
-- clickhouse/0012). An event id is `<seq>-<scan_id>`, so a Last-Event-ID names a place in this
-- order, and a resume replays the batches after it. org_ids/org_rows: which organizations have
-- rows in the batch and how many (a process without subscribers of those organizations reads
-- nothing; a reader can tell a partial read). Rows are kept 25 hours (resume window 24 hours).
create table scan_stream_batches (
  seq bigserial primary key,
  token text not null unique,
  stored_at timestamptz not null default now(),
  org_ids bigint[] not null,
  org_rows integer[] not null
);
create index scan_stream_batches_stored_at on scan_stream_batches (stored_at);
create index scan_stream_batches_org_ids on scan_stream_batches using gin (org_ids);

-- Open streams, for the per-organization limit across every process and machine. A process
-- refreshes seen_at of its streams every 15 s; a row not refreshed for 45 s (its process died) no
-- longer counts.
create table scan_stream_sessions (
  id text primary key,
  org_id bigint not null references organizations (id) on delete cascade,
  opened_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
create index scan_stream_sessions_org on scan_stream_sessions (org_id);

-- Concurrent streams per organization, by plan (docs/stream.md, docs/limits.md).
alter table plans add column live_streams integer not null default 2 check (live_streams >= 0);
update plans set live_streams = case tier
  when 'starter' then 2 when 'business' then 5 when 'professional' then 10 else 25 end;
