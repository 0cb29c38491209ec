-- TLS certificates of custom domains, issued through ACME (HTTP-01 answered by the redirect listener),
-- and the daily re-check of ownership. Private keys are stored sealed (AES-256-GCM under a key derived
-- from SECRET_KEY, server/at-rest.ts); certificates themselves are public.

alter table domains rename column cert_expires_at to ssl_expires_at; -- expiry of the certificate served
alter table domains
  add column ssl_error text,                             -- why the latest issuance failed; null when fine
  add column ssl_failures integer not null default 0,    -- failed issuances in a row (retry backoff)
  add column txt_missing_since timestamptz;              -- first daily re-check that missed the TXT record

-- The certificate served for a domain (at most one; a renewal replaces it).
create table domain_certificates (
  domain_id bigint primary key references domains (id) on delete cascade,
  certificate_pem text not null,   -- leaf first, then the chain, as the ACME server sent it
  private_key_sealed bytea not null,
  not_before timestamptz not null,
  not_after timestamptz not null,
  created_at timestamptz not null default now()
);

-- One ACME account per directory URL; its key sealed like certificate keys.
create table acme_accounts (
  directory_url text primary key,
  account_url text not null,
  account_key_sealed bytea not null,
  created_at timestamptz not null default now()
);

-- HTTP-01 challenges in flight. Kept in Postgres so that whichever process (or host) the ACME
-- server's validation request reaches can answer it.
create table acme_challenges (
  token text primary key,
  host text not null,
  key_authorization text not null,
  expires_at timestamptz not null
);
