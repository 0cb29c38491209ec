-- A host is held exclusively only once verified. Unverified claims of several organizations on one
-- host coexist; the first to verify wins and the others fail; an unverified claim expires
-- (claim_expires_at). Fallback origins no longer configured are retired, never deleted.
--
-- status: pending (claimed, not verified), active (verified: holds the host), failed (another
-- organization verified the host first), expired (never verified in time), unverified (was active;
-- its TXT record has been missing for the grace period), retired (a fallback origin no longer
-- configured).

alter table domains drop constraint domains_status_check;
alter table domains add constraint domains_status_check
  check (status in ('pending', 'active', 'failed', 'expired', 'unverified', 'retired'));

alter table domains add column claim_expires_at timestamptz;
update domains set claim_expires_at = created_at + interval '7 days' where type = 'custom' and status = 'pending';

-- Held hosts are unique; claims are not, except within one organization.
drop index domains_host_key;
create unique index domains_host_held on domains (lower(host))
  where deleted_at is null and status in ('active', 'unverified', 'retired');
create unique index domains_org_host_claim on domains (org_id, lower(host))
  where deleted_at is null and status in ('pending', 'active', 'unverified');
create index domains_host_lookup on domains (lower(host)) where deleted_at is null;
