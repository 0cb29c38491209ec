-- The service as the OAuth 2.1 authorization server of its own /mcp resource (server/oauth/).
--
-- A grant (a person's consent to one client in one organization) is an api_tokens row: the access
-- token is that row's secret, rotated with every refresh, so the grant authenticates, is admitted,
-- metered and revoked exactly like any token and is listed as a connected app. `audience` binds
-- the row to one resource (RFC 8707); REST refuses a token with an audience.
alter table api_tokens
  add column audience text,
  add column oauth_client_id text,
  add column oauth_client_name text,
  add column oauth_redirect_uri text;

-- Registered clients: Dynamic Client Registration (RFC 7591) and the cache of Client ID Metadata
-- Documents (the client id is the document's https URL).
create table oauth_clients (
  client_id text primary key,
  kind text not null check (kind in ('dcr', 'cimd')),
  metadata jsonb not null,
  -- DCR: the address that registered, for the per-address rate limit.
  registered_from text,
  fetched_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index oauth_clients_registrations on oauth_clients (registered_from, created_at) where kind = 'dcr';

-- Authorization codes: single use, short-lived, bound to the client, redirect URI, PKCE challenge
-- and resource. A code presented twice revokes the grant it produced (OAuth 2.1 section 4.1.3).
create table oauth_codes (
  code_hash bytea primary key,
  client_id text not null,
  org_id bigint not null references organizations (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  abilities text[] not null,
  redirect_uri text not null,
  code_challenge text not null,
  resource text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  token_id bigint references api_tokens (id) on delete cascade,
  created_at timestamptz not null default now()
);

-- Refresh tokens: rotated on every use; a used one presented again revokes the whole grant.
create table oauth_refresh_tokens (
  id bigserial primary key,
  token_id bigint not null references api_tokens (id) on delete cascade,
  secret_hash bytea not null unique,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);
create index oauth_refresh_tokens_grant on oauth_refresh_tokens (token_id);
