-- Confirm-then-execute for guarded MCP tools. A confirmation is bound to the organization, the
-- token, the tool and a canonical hash of the arguments; it is single use and short-lived.
-- Kept in Postgres so every server process agrees. Only a SHA-256 of the confirmation id is stored.
create table mcp_confirmations (
  id_hash bytea primary key,
  org_id bigint not null references organizations (id) on delete cascade,
  token_id bigint not null references api_tokens (id) on delete cascade,
  tool text not null,
  args_hash text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index mcp_confirmations_expiry on mcp_confirmations (org_id, expires_at);
