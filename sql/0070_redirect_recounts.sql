-- Codes whose redirects_count is to be recounted from the scans stored in ClickHouse, once the scan
-- batches that named them are in (server/redirect/leftovers.ts, docs/redirect.md).
--
-- A version before sql/0022 counted a capped code's redirects when it reserved them and recorded no
-- reservation: the journals and spill files of such a process killed outright hold scans already
-- counted, and what it had reserved and not used is in redirects_count with nothing to say so. Its
-- batches are told by their token (a ULID minted before sql/0022 was applied here); replaying one
-- adds no capped code's scans, and puts every capped code here (versions before sql/0025, which
-- counted no batch, put the batch's uncapped codes here too). Once those files are replayed, each
-- code listed gets its stored scans plus what live processes hold reserved, and its row goes.
create table redirect_recounts (
  code_id bigint primary key references qr_codes (id) on delete cascade,
  listed_at timestamptz not null default now()
);
