-- The API caches authenticated principals in memory; these triggers tell every process which
-- organization's tokens, memberships or plan changed (LISTEN auth_cache), so a revoked token or
-- a changed plan takes effect at once everywhere. Payload: the organization id, or '*' for all.

create function auth_notify_org() returns trigger language plpgsql as $$
begin
  perform pg_notify('auth_cache', coalesce(new.org_id, old.org_id)::text);
  return null;
end $$;

-- last_used_at is written by admission at most once a minute per token; it changes nothing cached.
create function auth_notify_token() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and (to_jsonb(new) - 'last_used_at') = (to_jsonb(old) - 'last_used_at') then
    return null;
  end if;
  perform pg_notify('auth_cache', coalesce(new.org_id, old.org_id)::text);
  return null;
end $$;

create trigger api_tokens_auth_notify
  after update or delete on api_tokens
  for each row execute function auth_notify_token();

create trigger memberships_auth_notify
  after insert or update or delete on memberships
  for each row execute function auth_notify_org();

create function auth_notify_organization() returns trigger language plpgsql as $$
begin
  perform pg_notify('auth_cache', coalesce(new.id, old.id)::text);
  return null;
end $$;

create trigger organizations_auth_notify
  after update or delete on organizations
  for each row execute function auth_notify_organization();

create function auth_notify_all() returns trigger language plpgsql as $$
begin
  perform pg_notify('auth_cache', '*');
  return null;
end $$;

create trigger plans_auth_notify
  after update or delete on plans
  for each statement execute function auth_notify_all();
