// The `domains` row as the domain services read it (sql/0002_resources.sql and later migrations).
import type { DomainSettingsInput } from './schema.js';

/** See server/domains/lifecycle.ts for the transitions and docs/domains.md for their meaning. */
export type DomainStatus = 'pending' | 'active' | 'failed' | 'expired' | 'unverified' | 'retired';
type SslStatus = 'pending' | 'issuing' | 'active' | 'failed';

export interface DomainRow {
  id: number;
  ulid: string;
  org_id: number | null;
  host: string;
  origin: string | null;
  type: 'custom' | 'fallback';
  status: DomainStatus;
  ssl_status: SslStatus;
  is_primary: boolean;
  verification: { txt_record_name?: string; txt_record_value?: string; cname_target?: string };
  verified_at: Date | null;
  claim_expires_at: Date | null;
  /** Expiry of the certificate served (null: none). */
  ssl_expires_at: Date | null;
  /** Why the latest issuance failed (null when it did not). */
  ssl_error: string | null;
  ssl_failures: number;
  txt_missing_since: Date | null;
  last_checked_at: Date | null;
  last_check_error: string | null;
  settings: DomainSettingsInput;
  created_at: Date;
  updated_at: Date;
}

/**
 * The statuses of a domain row that holds its host and serves its codes: active, unverified (its
 * codes answer until its certificate expires) and retired (a shared fallback host no longer
 * configured; custom domains are never retired). Pending claims of a host hold nothing; failed and
 * expired rows serve nothing. The unique index on live hosts covers exactly these
 * (sql/0009_domain_claims.sql).
 */
export const SERVING_STATUSES: readonly DomainStatus[] = ['active', 'unverified', 'retired'];

/** Whether new codes may be put on a domain: live claims and verified custom domains, active fallbacks. */
export function takesNewCodes(domain: { type: string; status: string }): boolean {
  return domain.type === 'custom'
    ? domain.status === 'pending' || domain.status === 'active'
    : domain.status === 'active';
}
