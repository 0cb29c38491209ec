// Domains: the shared fallback hosts (no organization, readable by all) and each organization's
// custom domains, with DNS ownership verification, certificate jobs and the primary flag.
// Every service and data-access function takes the organization first.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { queueCertificate } from './certificate-jobs.js';
import { requireHttpUrl } from '../schemas/http-url.js';
import { checkTxt, type TxtCheck } from './dns-check.js';
import { normalizeHost, originHostname } from './hostname.js';
import type { DomainRow } from './domain-row.js';
import { claimVerified, expireClaim, lockHost } from './lifecycle.js';
import type { DomainSettingsInput, UpdateDomainBody } from './schema.js';

export const TXT_PREFIX = '_qr-verify.';

export interface DomainOut {
  ulid: string;
  host: string;
  type: 'custom' | 'fallback';
  status: string;
  ssl_status: string;
  ssl_expires_at: Date | null;
  ssl_error: string | null;
  is_primary: boolean;
  is_shared: boolean;
  verified_at: Date | null;
  verification: Record<string, unknown>;
  settings: DomainSettingsInput;
  created_at: Date;
  updated_at: Date;
}

export function renderDomain(row: DomainRow): DomainOut {
  const custom = row.type === 'custom';
  return {
    ulid: row.ulid,
    host: row.host,
    type: row.type,
    status: row.status,
    ssl_status: row.ssl_status,
    ssl_expires_at: row.ssl_expires_at,
    ssl_error: row.ssl_error,
    is_primary: row.is_primary,
    is_shared: !custom,
    verified_at: row.verified_at,
    verification: custom
      ? {
          txt_record_name: row.verification.txt_record_name,
          txt_record_value: row.verification.txt_record_value,
          cname_target: row.verification.cname_target,
          claim_expires_at: row.claim_expires_at,
          last_checked_at: row.last_checked_at,
          last_error: row.last_check_error,
        }
      : {},
    settings: row.settings ?? {},
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Domains an organization may see and use: its own custom domains and the shared fallbacks. */
function visible(db: Knex | Knex.Transaction, org: OrgRecord): Knex.QueryBuilder {
  return db('domains')
    .whereNull('deleted_at')
    .where((q) => q.where('org_id', org.id).orWhere((f) => f.whereNull('org_id').where('type', 'fallback')));
}

export async function listDomainsPage(db: Knex, org: OrgRecord, afterId: number, n: number): Promise<DomainRow[]> {
  return visible(db, org).where('id', '>', afterId).orderBy('id').limit(n).select<DomainRow[]>('*');
}

export async function findVisibleDomain(
  db: Knex | Knex.Transaction,
  org: OrgRecord,
  domainUlid: string,
): Promise<DomainRow | undefined> {
  return visible(db, org).where('ulid', domainUlid.toUpperCase()).first<DomainRow | undefined>('*');
}

export async function getDomain(db: Knex, org: OrgRecord, domainUlid: string): Promise<DomainRow> {
  const row = await findVisibleDomain(db, org, domainUlid);
  if (!row) throw ApiError.notFound('domain');
  return row;
}

/**
 * The TXT value proving ownership. It is derived from the organization and the host, so re-adding a
 * domain whose record is already published verifies at once (POST verify=true), while another
 * organization claiming the same host gets a different value.
 */
export function verificationToken(app: AppContext, org: OrgRecord, host: string): string {
  const mac = crypto.createHmac('sha256', app.secretKey).update(`domain-verification:${org.id}:${host}`).digest();
  return `qr-verify=${mac.subarray(0, 24).toString('base64url')}`;
}

/** The CNAME a custom domain points at: the first fallback origin's hostname. */
function cnameTarget(app: AppContext): string {
  return originHostname(app.config.fallbackOrigins[0] ?? 'http://localhost');
}

async function fallbackHostnames(app: AppContext): Promise<Set<string>> {
  const rows = await app
    .db('domains')
    .where({ type: 'fallback' })
    .whereNull('deleted_at')
    .select<{ host: string }[]>('host');
  const names = new Set(app.config.fallbackOrigins.map(originHostname));
  for (const r of rows) names.add(originHostname(`http://${r.host}`));
  return names;
}

export async function createDomain(
  app: AppContext,
  org: OrgRecord,
  input: { host: string; verify: boolean },
): Promise<DomainRow> {
  const normalized = normalizeHost(input.host);
  if (!normalized.ok) throw ApiError.field('host', normalized.message);
  const host = normalized.host;
  if ((await fallbackHostnames(app)).has(host)) {
    throw ApiError.field('host', 'This host is a shared fallback host of the service and cannot be added.');
  }
  const now = app.clock.now();
  let row: DomainRow;
  try {
    // A claim: it holds nothing until verified, and other organizations may claim the same host.
    [row] = await app
      .db('domains')
      .insert({
        ulid: newUlid(now.getTime()),
        org_id: org.id,
        host,
        type: 'custom',
        status: 'pending',
        ssl_status: 'pending',
        verification: JSON.stringify({
          txt_record_name: TXT_PREFIX + host,
          txt_record_value: verificationToken(app, org, host),
          cname_target: cnameTarget(app),
        }),
        claim_expires_at: new Date(now.getTime() + app.config.domainClaimTtlHours * 3600_000),
        created_at: now,
        updated_at: now,
      })
      .returning<DomainRow[]>('*');
  } catch (err) {
    // Only this organization's own live claim on the host can collide (domains_org_host_claim).
    if (sqlState(err) === UNIQUE_VIOLATION) {
      throw ApiError.field('host', 'This organization already has this host among its domains.');
    }
    throw err;
  }
  if (!input.verify) return row;
  return updateDomain(app, org, row.ulid, { verify: true });
}

/** Re-reads the row under a lock; the organization binds it. */
async function lockDomain(trx: Knex.Transaction, org: OrgRecord, id: number): Promise<DomainRow> {
  const row = await trx('domains')
    .where({ id, org_id: org.id })
    .whereNull('deleted_at')
    .forUpdate()
    .first<DomainRow | undefined>('*');
  if (!row) throw ApiError.notFound('domain');
  return row;
}

/** What a verify attempt on a claim that can no longer verify answers (after its transaction). */
function closedClaim(status: 'failed' | 'expired'): ApiError {
  return status === 'expired'
    ? ApiError.conflict('This claim expired before its TXT record was verified; delete it and add the host again.')
    : ApiError.conflict(
        'This claim failed: another organization verified this host first. Delete it, or add the host again later.',
      );
}

/** Settings with their redirect URLs normalised (server/schemas/http-url.ts); other keys as given. */
function normaliseSettings(settings: DomainSettingsInput): DomainSettingsInput {
  const out: DomainSettingsInput = { ...settings };
  for (const key of ['root_redirect', 'not_found_redirect'] as const) {
    const v = settings[key];
    if (v !== undefined) out[key] = v === null ? null : requireHttpUrl(`settings.${key}`, v);
  }
  return out;
}

export async function updateDomain(
  app: AppContext,
  org: OrgRecord,
  domainUlid: string,
  patch: UpdateDomainBody,
): Promise<DomainRow> {
  const found = await findVisibleDomain(app.db, org, domainUlid);
  if (!found) throw ApiError.notFound('domain');
  if (found.type === 'fallback') {
    if (patch.is_primary) throw ApiError.field('is_primary', 'A shared fallback domain cannot be primary.');
    if (patch.verify || patch.refresh_ssl || patch.settings) {
      throw ApiError.conflict('Shared fallback domains are managed by the service and cannot be changed.');
    }
    return found;
  }
  if (patch.verify && (found.status === 'failed' || found.status === 'expired')) throw closedClaim(found.status);
  const settings = patch.settings && normaliseSettings(patch.settings);
  // The DNS lookup happens before the transaction, so no row lock waits on the network.
  let check: TxtCheck | null = null;
  if (patch.verify) {
    check = await checkTxt(
      app.config.dnsResolvers,
      found.verification.txt_record_name ?? TXT_PREFIX + found.host,
      found.verification.txt_record_value ?? '',
    );
  }
  const now = app.clock.now();
  const outcome = await app.db.transaction(async (trx): Promise<DomainRow | { closed: 'expired' }> => {
    if (patch.is_primary) {
      // Serializes primary changes of one organization, so two concurrent requests cannot both win.
      await trx('organizations').where({ id: org.id }).forUpdate().first('id');
    }
    // The host's claims in id order before this one's own row, as claimVerified locks them (lockHost).
    if (check?.matched) await lockHost(trx, found.host);
    let row = await lockDomain(trx, org, found.id);
    if (patch.verify) {
      if (row.status === 'pending' && row.claim_expires_at && row.claim_expires_at <= now) {
        await expireClaim(app, trx, row, now);
        return { closed: 'expired' };
      }
      // Another organization won the host while the TXT record was looked up: the answer shows it.
      if (row.status === 'failed' || row.status === 'expired') return row;
    }
    const changes: Partial<Record<keyof DomainRow, unknown>> = {};
    if (check?.matched && row.status !== 'active') {
      row = await claimVerified(app, trx, row, now, { ssl_status: 'pending' });
      if (row.status === 'active')
        await queueCertificate(trx, { org_id: org.id, domain_id: row.id, reason: 'verified' });
    } else if (check) {
      changes.last_checked_at = now;
      changes.last_check_error = check.matched ? null : check.reason;
    }
    if (patch.refresh_ssl) {
      if (row.status !== 'active') {
        throw ApiError.conflict('Only a verified (active) custom domain can refresh its certificate; verify it first.');
      }
      changes.ssl_status = 'pending';
      await queueCertificate(trx, { org_id: org.id, domain_id: row.id, reason: 'refresh' });
    }
    if (patch.is_primary === true && !row.is_primary) {
      await trx('domains')
        .where({ org_id: org.id, is_primary: true })
        .whereNot({ id: row.id })
        .update({ is_primary: false, updated_at: now });
      changes.is_primary = true;
    } else if (patch.is_primary === false && row.is_primary) {
      changes.is_primary = false;
    }
    if (settings) {
      const merged: Record<string, unknown> = { ...(row.settings ?? {}) };
      for (const [k, v] of Object.entries(settings)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      changes.settings = JSON.stringify(merged);
    }
    if (!Object.keys(changes).length) return row;
    changes.updated_at = now;
    const [updated] = await trx('domains')
      .where({ id: row.id, org_id: org.id })
      .update(changes)
      .returning<DomainRow[]>('*');
    return updated;
  });
  if ('closed' in outcome) throw closedClaim(outcome.closed);
  return outcome;
}

/**
 * Soft-deletes a custom domain: refused (409 domain_in_use) while live codes use it. Its certificate
 * and private key go with it; brands that named it as their primary domain name none.
 */
export async function deleteDomain(app: AppContext, org: OrgRecord, domainUlid: string): Promise<void> {
  const found = await findVisibleDomain(app.db, org, domainUlid);
  if (!found) throw ApiError.notFound('domain');
  if (found.type === 'fallback') {
    throw ApiError.conflict('Shared fallback domains are managed by the service and cannot be deleted.');
  }
  const now = app.clock.now();
  await app.db.transaction(async (trx) => {
    // FOR UPDATE waits for code inserts in flight (their foreign key holds the row), and code inserts
    // that come later re-read the row and find it deleted (qr-codes resolveRefs).
    const row = await lockDomain(trx, org, found.id);
    const { count } = (await trx('qr_codes')
      .where({ domain_id: row.id, org_id: org.id })
      .whereNull('deleted_at')
      .count('* as count')
      .first()) as { count: string | number };
    if (Number(count) > 0) throw ApiError.domainInUse(Number(count));
    await trx('brands').where({ org_id: org.id, primary_domain_id: row.id }).update({ primary_domain_id: null });
    await trx('domain_certificates').where({ domain_id: row.id }).delete();
    await trx('domains')
      .where({ id: row.id, org_id: org.id })
      .update({ deleted_at: now, is_primary: false, updated_at: now });
  });
  app.log.info({ domain_id: found.id, org_id: org.id, host: found.host }, 'domain deleted');
}
