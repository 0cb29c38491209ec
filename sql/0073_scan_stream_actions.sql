-- The live scan stream sends landing-page actions (scan_actions) as well as scans (docs/stream.md):
-- a stored batch of either table is one row of the ledger, in the same seq order, and `kind` says
-- which table its rows are read from (scan_events.batch or scan_actions.batch, clickhouse/0019).
alter table scan_stream_batches
  add column kind text not null default 'scan' check (kind in ('scan', 'action'));
