-- The scans.batch webhook event (server/scan-batches/): per organization that listens, the instant
-- before which every minute has been announced. The per-minute job moves it forward in the
-- transaction that writes the minutes' events, so a run repeated or run twice at once sends each
-- minute once.
create table scan_batch_marks (
  org_id bigint primary key references organizations (id) on delete cascade,
  sent_through timestamptz not null
);
