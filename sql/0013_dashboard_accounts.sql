-- The web dashboard: passwords and the staff flag on users, one-time links (set a password, join
-- an organization), server-side sessions, sign-in throttle windows shared by every process, the
-- audit log, and the trigram index behind the code search.

alter table users add column password_hash text;
alter table users add column is_staff boolean not null default false;

-- A link is shown once (`/app/link/<secret>`); only a SHA-256 of its secret is stored. purpose
-- sign_in: the user sets a password and is signed in (qrctl org create, qrctl user login-link).
-- purpose invite: the person joins org_id with role (members page), creating the user if new.
create table account_links (
  id bigserial primary key,
  ulid text not null unique,
  secret_hash bytea not null unique,
  purpose text not null check (purpose in ('sign_in', 'invite')),
  email text not null,
  user_id bigint references users (id) on delete cascade,
  org_id bigint references organizations (id) on delete cascade,
  role text check (role in ('owner', 'admin', 'editor', 'viewer')),
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz,
  check ((purpose = 'invite') = (org_id is not null and role is not null))
);
create index account_links_org on account_links (org_id, id) where purpose = 'invite';

-- A session cookie holds a random secret; only its SHA-256 is stored. A session ends at
-- expires_at (absolute) or when last_seen_at is older than the idle timeout. The per-session
-- minute window of the dashboard's calls lives on the row.
create table web_sessions (
  id bigserial primary key,
  secret_hash bytea not null unique,
  user_id bigint not null references users (id) on delete cascade,
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  expires_at timestamptz not null,
  address text,
  user_agent text,
  window_start timestamptz,
  window_hits integer not null default 0
);
create index web_sessions_user on web_sessions (user_id);

-- Sign-in attempts in fixed windows, per account ('account:<email>') and per address
-- ('address:<ip>'), counted before the password is checked so that concurrent attempts from any
-- number of processes cannot exceed the limit.
create table sign_in_windows (
  key text primary key,
  window_start timestamptz not null,
  attempts integer not null
);

create table audit_log (
  id bigserial primary key,
  ulid text not null unique,
  org_id bigint references organizations (id) on delete cascade,
  actor_user_id bigint references users (id) on delete set null,
  actor text not null,
  action text not null,
  details jsonb not null default '{}',
  created_at timestamptz not null
);
create index audit_log_org on audit_log (org_id, id);

-- Code search (GET /v1/qr-codes?search=): substring match on name, slug and destination URL.
create extension if not exists pg_trgm;
create index qr_codes_search on qr_codes
  using gin ((lower(coalesce(name, '') || ' ' || slug || ' ' || coalesce(destination ->> 'url', destination #>> '{}'))) gin_trgm_ops)
  where deleted_at is null;
