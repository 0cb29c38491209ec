-- Tenant-scoped lookups are `where org_id = ? and ulid = ?`. With only a ulid index beside other
-- (org_id, ...) indexes, the planner could pick an (org_id, ...) index and filter every row of the
-- organization: seen as 22 ms per GET /v1/qr-codes/{code_ulid} right after 100,000 codes were
-- loaded and before autovacuum analyzed the table (0.13 ms with this index). An index on both
-- columns is the cheapest plan whatever the statistics say.
create unique index qr_codes_org_ulid on qr_codes (org_id, ulid);
create unique index brands_org_ulid on brands (org_id, ulid);
create unique index qr_styles_org_ulid on qr_styles (org_id, ulid);
create unique index bulk_imports_org_ulid on bulk_imports (org_id, ulid);
