-- Print runs (server/qr-code-exports/): an export renders a frozen selection of codes into one ZIP.
-- The selection is fixed when the export is requested (qr_code_export_items, in file order), so
-- total is known at once and a restarted job renders the same codes. The ZIP is kept in Postgres as
-- 1 MiB chunks written while it is produced, so memory stays flat, every process can serve the
-- download, and expiry is a delete. Chunks are stored uncompressed: ZIP data does not compress.
create table qr_code_exports (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  token_id bigint references api_tokens (id) on delete set null,
  source text,
  status text not null default 'queued'
    check (status in ('queued', 'processing', 'completed', 'failed', 'expired')),
  format text not null check (format in ('svg', 'png', 'pdf')),
  size integer,
  style_id bigint references qr_styles (id) on delete set null,
  selection_kind text not null check (selection_kind in ('codes', 'brand', 'bulk_import')),
  selection_ulid text,
  total integer not null,
  done integer not null default 0,
  attempts integer not null default 0,
  zip_bytes bigint,
  error_message text,
  started_at timestamptz,
  completed_at timestamptz,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index qr_code_exports_org on qr_code_exports (org_id, id);
create index qr_code_exports_expiry on qr_code_exports (expires_at) where status = 'completed';

create table qr_code_export_items (
  export_id bigint not null references qr_code_exports (id) on delete cascade,
  position integer not null,
  code_id bigint not null references qr_codes (id) on delete cascade,
  primary key (export_id, position)
);

create table qr_code_export_chunks (
  export_id bigint not null references qr_code_exports (id) on delete cascade,
  seq integer not null,
  data bytea not null,
  primary key (export_id, seq)
);
alter table qr_code_export_chunks alter column data set storage external;
