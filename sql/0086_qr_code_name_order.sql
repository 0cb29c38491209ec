-- The code list in name order (GET /v1/qr-codes?order=name|name_desc): each page is a short range
-- of this index after the previous page's last (name, id), as fast at 100,000 codes as at 10.
-- A code without a name sorts by its slug (the part after `<org-slug>/`), as the dashboard shows it.
create index qr_codes_name_order on qr_codes (org_id, lower(coalesce(name, split_part(slug, '/', 2))), id)
  where deleted_at is null;

-- The brand and domain filters of the list.
create index qr_codes_org_brand on qr_codes (org_id, brand_id, id) where deleted_at is null;
create index qr_codes_org_domain on qr_codes (org_id, domain_id, id) where deleted_at is null;
