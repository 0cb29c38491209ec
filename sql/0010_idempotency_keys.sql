-- Idempotency keys of POST and PATCH calls (server/operations/idempotency.ts): the first response
-- to a key is kept for 24 hours per organization and key, and a retry of the same request gets it
-- back instead of running again.
--
-- state running: a call holds the key and is executing; locked_until bounds how long a process
-- that died mid-call keeps it (a retry after that runs the call again). state done: the stored
-- answer. fingerprint: SHA-256 of the operation and its canonical input, so the same key with a
-- different request is refused.
create table idempotency_keys (
  org_id bigint not null references organizations (id) on delete cascade,
  key text not null,
  operation text not null,
  fingerprint text not null,
  state text not null check (state in ('running', 'done')),
  locked_until timestamptz,
  response_status integer,
  response_headers jsonb,
  response_content_type text,
  -- The body's JSON text as first sent (json keeps key order; jsonb would not).
  response_body text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  primary key (org_id, key)
);
create index idempotency_keys_expiry on idempotency_keys (expires_at);
