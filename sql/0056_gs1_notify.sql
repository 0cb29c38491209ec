-- The redirect's known-keys filter holds the GS1 keys of gs1 codes (`<org-slug>|<gtin-14>`, lower
-- case), so a flood of made-up GTINs is answered without asking Postgres, as for slugs. A code
-- notification now also names the GS1 keys of the code before and after the change (`gs1`, empty
-- for other types): every process adds them to its filter and drops just those cached entries.

create or replace function redirect_notify_code() returns trigger language plpgsql as $$
declare
  gs1 text[] := '{}';
  org_slug text;
begin
  if tg_op = 'UPDATE'
     and (to_jsonb(new) - 'redirects_count' - 'updated_at') = (to_jsonb(old) - 'redirects_count' - 'updated_at') then
    return null;
  end if;
  if (tg_op <> 'INSERT' and old.type = 'gs1') or (tg_op <> 'DELETE' and new.type = 'gs1') then
    select lower(slug) into org_slug from organizations where id = coalesce(new.org_id, old.org_id);
    if tg_op <> 'INSERT' and old.type = 'gs1' then
      gs1 := gs1 || (org_slug || '|' || (old.destination ->> 'gtin'));
    end if;
    if tg_op <> 'DELETE' and new.type = 'gs1' then
      gs1 := gs1 || (org_slug || '|' || (new.destination ->> 'gtin'));
    end if;
  end if;
  perform pg_notify('redirect_cache', json_build_object(
    't', 'code',
    'id', coalesce(new.id, old.id),
    'keys', json_build_array(lower(coalesce(old.slug, new.slug)), lower(coalesce(new.slug, old.slug))),
    'gs1', to_json(gs1)
  )::text);
  return null;
end $$;
