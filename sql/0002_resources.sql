-- Resources: domains (shared fallback origins and custom domains), brands, QR styles, QR codes,
-- bulk imports.

create table domains (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint references organizations (id) on delete cascade, -- null: shared fallback origin
  host text not null,          -- lowercase, punycode; fallback: host[:port] of the origin
  origin text,                 -- fallback only: scheme://host[:port]
  type text not null check (type in ('custom', 'fallback')),
  status text not null default 'pending' check (status in ('pending', 'active', 'failed')),
  ssl_status text not null default 'pending' check (ssl_status in ('pending', 'issuing', 'active', 'failed')),
  is_primary boolean not null default false,
  verification jsonb not null default '{}',
  verified_at timestamptz,
  last_checked_at timestamptz,
  last_check_error text,
  settings jsonb not null default '{}', -- root_redirect, not_found_redirect
  cert_expires_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  check ((type = 'fallback') = (org_id is null))
);
create unique index domains_host_key on domains (lower(host)) where deleted_at is null;
create unique index domains_one_primary on domains (org_id) where is_primary and deleted_at is null;
create index domains_org on domains (org_id) where deleted_at is null;

create table brands (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  name text not null,
  slug text not null,
  brand_kit jsonb,
  settings jsonb,
  primary_domain_id bigint references domains (id),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index brands_slug_key on brands (org_id, lower(slug));

create table qr_styles (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  brand_id bigint references brands (id),
  name text not null,
  config jsonb not null,
  is_preset boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
create index qr_styles_org on qr_styles (org_id, id) where deleted_at is null;

create table qr_codes (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  brand_id bigint references brands (id),
  domain_id bigint not null references domains (id),
  style_id bigint references qr_styles (id),
  name text,
  slug text not null,                 -- '<org-slug>/<slug>'
  type text not null default 'url',
  status text not null default 'active' check (status in ('active', 'paused', 'archived')),
  destination jsonb not null,         -- a URL string or an object with a url key
  routing jsonb,
  schedule jsonb,
  password_hash text,
  redirects_count bigint not null default 0,
  redirect_cap integer,
  date_begin timestamptz,
  expire_at timestamptz,
  utm_params jsonb,
  device_routing jsonb,
  language_routing jsonb,
  tracking_pixels jsonb,
  custom_js text,
  landing_config jsonb,
  prelander_enabled boolean not null default false,
  prelander_seconds integer,
  prelander_message text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
-- Organization slugs are globally unique, so '<org-slug>/<slug>' is too; soft-deleted slugs can be reused.
create unique index qr_codes_slug_key on qr_codes (lower(slug)) where deleted_at is null;
create index qr_codes_org on qr_codes (org_id, id) where deleted_at is null;
create index qr_codes_brand on qr_codes (org_id, brand_id) where deleted_at is null;

create table bulk_imports (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint not null references organizations (id) on delete cascade,
  token_id bigint references api_tokens (id) on delete set null,
  type text not null default 'qr_codes',
  status text not null default 'staged'
    check (status in ('staged', 'queued', 'processing', 'completed', 'completed_with_errors', 'failed', 'expired')),
  source text,
  defaults jsonb not null default '{}',
  confirm_token_hash bytea,
  confirm_expires_at timestamptz,
  total_rows integer not null default 0,
  valid_row_count integer,
  processed_rows integer not null default 0,
  success_count integer not null default 0,
  failed_count integer not null default 0,
  skipped_count integer not null default 0,
  preview_errors jsonb not null default '[]',
  error_message text,
  confirmed_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index bulk_imports_org on bulk_imports (org_id, id);

create table bulk_import_rows (
  import_id bigint not null references bulk_imports (id) on delete cascade,
  row_index integer not null,
  data jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'invalid', 'created', 'failed', 'skipped')),
  error jsonb,
  code_id bigint references qr_codes (id),
  primary key (import_id, row_index)
);
