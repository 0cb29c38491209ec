-- Tracking pixels (server/qr-codes/pixels.ts): a brand's default list, and the organization's
-- consent rule for them. qr_codes.tracking_pixels exists since 0002.

-- required (default): pixels load only after the visitor accepts them on the pixel page's banner;
-- not_required: they load at once (the organization has its own legal basis).
alter table organizations add column pixel_consent text not null default 'required'
  check (pixel_consent in ('required', 'not_required'));

-- The pixels of the brand's codes that set none of their own (null: none).
alter table brands add column tracking_pixels jsonb;

-- The redirect caches codes with their brand's pixels and their organization's consent rule: a
-- change of either drops the cached codes of every process (payload {"t":"codes"}).
create function redirect_notify_codes() returns trigger language plpgsql as $$
begin
  perform pg_notify('redirect_cache', json_build_object('t', 'codes', 'id', new.id, 'keys', json_build_array())::text);
  return null;
end $$;

create trigger brands_redirect_notify
  after update on brands
  for each row
  when (new.tracking_pixels is distinct from old.tracking_pixels or new.brand_kit is distinct from old.brand_kit)
  execute function redirect_notify_codes();

create trigger organizations_pixel_consent_notify
  after update on organizations
  for each row
  when (new.pixel_consent is distinct from old.pixel_consent)
  execute function redirect_notify_codes();
