-- Imports of links and their scan history from other link services (server/imports/).

-- The plan's limit on live codes (null: no limit). Imports check it in their preview and while
-- they run; seeded plans carry none, operators may set one.
alter table plans add column max_codes integer check (max_codes >= 0);

create table imports (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  token_id bigint references api_tokens (id) on delete set null,
  source text not null check (source in ('csv', 'shlink', 'bitly', 'kutt', 'yourls', 'dub')),
  status text not null check (status in ('previewing', 'staged', 'queued', 'running', 'completed',
                                         'completed_with_errors', 'failed', 'expired')),
  options jsonb not null default '{}',
  -- The source's address and credentials, sealed (server/at-rest.ts, purpose import:<ulid>); wiped
  -- when the import ends.
  credentials bytea,
  -- An uploaded export file; wiped when the import ends.
  upload bytea,
  confirm_token_hash bytea,
  confirm_expires_at timestamptz,
  preview jsonb,
  links_total integer not null default 0,
  links_done integer not null default 0,
  links_created integer not null default 0,
  links_matched integer not null default 0,
  links_renamed integer not null default 0,
  links_skipped integer not null default 0,
  links_failed integer not null default 0,
  scans_total bigint not null default 0,
  scans_done bigint not null default 0,
  -- Where a failed or interrupted run resumes (the source's own cursor).
  continue_token jsonb,
  error_message text,
  started_at timestamptz,
  confirmed_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index imports_org_idx on imports (org_id, id desc);

-- One row per link the source listed, in source order: the mapping the preview shows and the run
-- executes.
create table import_links (
  import_id bigint not null references imports (id) on delete cascade,
  position integer not null,
  source_key text not null,
  source_domain text not null default '',
  short_code text not null,
  -- The code to create (a CodeWrite), null when the link cannot be mapped.
  code jsonb,
  visits_expected bigint not null default 0,
  -- pending, created, matched (imported before), skipped, failed
  status text not null default 'pending',
  -- Why the slug or domain changed, or why the link was skipped or failed.
  problems jsonb not null default '[]',
  code_id bigint,
  primary key (import_id, position)
);

-- What was imported, across runs: the key re-runs match on and each link's high-water mark.
create table imported_links (
  org_id bigint not null references organizations (id) on delete cascade,
  source text not null,
  source_domain text not null default '',
  source_key text not null,
  code_id bigint not null references qr_codes (id) on delete cascade,
  -- The newest scan imported (scans at or before it are never imported again).
  scans_through timestamptz,
  scans_imported bigint not null default 0,
  import_id bigint references imports (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (org_id, source, source_domain, source_key)
);
