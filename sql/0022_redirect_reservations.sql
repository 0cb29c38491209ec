-- Blocks of a capped code's redirects reserved by a redirect process and not yet settled, so that a
-- process killed outright (SIGKILL, an OOM kill) does not keep them for good
-- (server/qr-codes/scan-lookup.ts, server/redirect/counters.ts).
--
-- A reservation adds to qr_codes.redirects_count at once (the cap is checked on that one column) and
-- to the holder's row here; the holder's own scan batches settle it (the row goes down, the count
-- stays), and it gives back what it did not use at each flush (both go down). What is left of a holder
-- that is gone (its process is dead on its host, or it has not been seen for minutes) is taken off
-- redirects_count and its rows deleted, once; its journaled scans are counted when they are
-- replayed, like every batch replayed by another process.
-- holder: one ULID per life of a redirect process's counters; host and pid tell whether it is alive.
create table redirect_reservations (
  holder text not null,
  code_id bigint not null references qr_codes (id) on delete cascade,
  reserved integer not null check (reserved >= 0),
  host text not null,
  pid integer not null,
  seen_at timestamptz not null default now(),
  primary key (holder, code_id)
);
create index redirect_reservations_code on redirect_reservations (code_id);
