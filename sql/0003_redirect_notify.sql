-- The public redirect caches codes and domains in memory; these triggers tell every process what
-- changed (LISTEN redirect_cache), so a change is served everywhere within a second.
-- Payload: {"t":"code"|"domain","id":<id>,"keys":[old and new lookup keys]}. Counter flushes
-- (redirects_count, updated_at alone) do not notify.

create function redirect_notify_code() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE'
     and (to_jsonb(new) - 'redirects_count' - 'updated_at') = (to_jsonb(old) - 'redirects_count' - 'updated_at') then
    return null;
  end if;
  perform pg_notify('redirect_cache', json_build_object(
    't', 'code',
    'id', coalesce(new.id, old.id),
    'keys', json_build_array(lower(coalesce(old.slug, new.slug)), lower(coalesce(new.slug, old.slug)))
  )::text);
  return null;
end $$;

create trigger qr_codes_redirect_notify
  after insert or update or delete on qr_codes
  for each row execute function redirect_notify_code();

create function redirect_notify_domain() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE'
     and (to_jsonb(new) - 'updated_at' - 'last_checked_at') = (to_jsonb(old) - 'updated_at' - 'last_checked_at') then
    return null;
  end if;
  perform pg_notify('redirect_cache', json_build_object(
    't', 'domain',
    'id', coalesce(new.id, old.id),
    'keys', json_build_array(lower(coalesce(old.host, new.host)), lower(coalesce(new.host, old.host)))
  )::text);
  return null;
end $$;

create trigger domains_redirect_notify
  after insert or update or delete on domains
  for each row execute function redirect_notify_domain();

-- An organization's slug is part of every fallback-origin path of its codes.
create function redirect_notify_org() returns trigger language plpgsql as $$
begin
  if new.slug is distinct from old.slug then
    perform pg_notify('redirect_cache', json_build_object('t', 'org', 'id', new.id, 'keys', json_build_array())::text);
  end if;
  return null;
end $$;

create trigger organizations_redirect_notify
  after update on organizations
  for each row execute function redirect_notify_org();
