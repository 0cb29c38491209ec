// Domains: the shared fallback hosts (no organization, readable by all) and each organization's
// custom domains, with DNS ownership verification, certificate jobs and the primary flag.
// Every service and data-access function takes the organization first.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError, sqlState, UNIQUE_VIOLATION } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { checkTxt, type TxtCheck } from './dns-check.js';
import { normalizeHost, originHostname } from './hostname.js';
import type { DomainSettingsInput, UpdateDomainBody } from './schema.js';

export const CERTIFICATE_TASK = 'domain-certificate';
export const TXT_PREFIX = '_qr-verify.';

export interface DomainRow {
  id: number;
  ulid: string;
  org_id: number | null;
  host: string;
  origin: string | null;
  type: 'custom' | 'fallback';
  status: 'pending' | 'active' | 'failed';
  ssl_status: 'pending' | 'issuing' | 'active' | 'failed';
  is_primary: boolean;
  verification: { txt_record_name?: string; txt_record_value?: string; cname_target?: string };
  verified_at: Date | null;
  last_checked_at: Date | null;
  last_check_error: string | null;
  settings: DomainSettingsInput;
  created_at: Date;
  updated_at: Date;
}

export interface DomainOut {
  ulid: string;
  host: string;
  type: 'custom' | 'fallback';
  status: string;
  ssl_status: string;
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
    is_primary: row.is_primary,
    is_shared: !custom,
    verified_at: row.verified_at,
    verification: custom
      ? {
          txt_record_name: row.verification.txt_record_name,
          txt_record_value: row.verification.txt_record_value,
          cname_target: row.verification.cname_target,
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
export function cnameTarget(app: AppContext): string {
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
        created_at: now,
        updated_at: now,
      })
      .returning<DomainRow[]>('*');
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION) throw ApiError.field('host', 'This host is already in use.');
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

async function queueCertificate(
  trx: Knex.Transaction,
  org: OrgRecord,
  domainId: number,
  reason: string,
): Promise<void> {
  // One pending job per domain: a second request before it runs replaces the first.
  await enqueueJob(
    trx,
    CERTIFICATE_TASK,
    { org_id: org.id, domain_id: domainId, reason },
    { jobKey: `${CERTIFICATE_TASK}:${domainId}` },
  );
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
  return app.db.transaction(async (trx) => {
    if (patch.is_primary) {
      // Serializes primary changes of one organization, so two concurrent requests cannot both win.
      await trx('organizations').where({ id: org.id }).forUpdate().first('id');
    }
    const row = await lockDomain(trx, org, found.id);
    const changes: Partial<Record<keyof DomainRow, unknown>> = {};
    let status = row.status;
    if (check) {
      changes.last_checked_at = now;
      changes.last_check_error = check.matched ? null : check.reason;
      if (check.matched && row.status !== 'active') {
        status = 'active';
        changes.status = 'active';
        changes.verified_at = now;
        changes.ssl_status = 'pending';
        await queueCertificate(trx, org, row.id, 'verified');
      }
    }
    if (patch.refresh_ssl) {
      if (status !== 'active') {
        throw ApiError.conflict('Only a verified (active) custom domain can refresh its certificate; verify it first.');
      }
      changes.ssl_status = 'pending';
      await queueCertificate(trx, org, row.id, 'refresh');
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
    if (patch.settings) {
      const merged: Record<string, unknown> = { ...(row.settings ?? {}) };
      for (const [k, v] of Object.entries(patch.settings)) {
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
}
