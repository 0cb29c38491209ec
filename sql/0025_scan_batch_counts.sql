-- redirects_count of codes without a cap is added per scan batch, keyed by the batch's ClickHouse
-- deduplication token (server/qr-codes/scan-lookup.ts countScanBatch): the token's row is inserted
-- in the same statement as the counts, so a journal or spill file replayed after a crash (or twice,
-- or by two processes at once) adds each batch's redirects once. Rows older than the replay window
-- are pruned (server/redirect/counters.ts); a batch older than that is not counted again.
create table scan_batch_counts (
  token text primary key,
  counted_at timestamptz not null default now()
);
create index scan_batch_counts_counted_at on scan_batch_counts (counted_at);
