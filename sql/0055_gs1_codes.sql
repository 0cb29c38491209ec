-- gs1 codes (GS1 Digital Link): one live code per organization, domain and Digital Link key (the
-- GTIN with its consumer product variant, lot and serial), and the redirect's lookup of every
-- level of one GTIN in an organization (server/qr-codes/scan-lookup.ts findGs1CodesForScan).
create unique index qr_codes_gs1_key on qr_codes (
  org_id,
  domain_id,
  (destination ->> 'gtin'),
  coalesce(destination ->> 'cpv', ''),
  coalesce(destination ->> 'lot', ''),
  coalesce(destination ->> 'serial', '')
) where type = 'gs1' and deleted_at is null;
