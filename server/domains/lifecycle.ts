// Every status transition of a custom domain, one named function each: the row change, a log line
// and the domain_transitions_total counter. Callers pass the transaction the change belongs to.
//
//   pending ──verify──▶ active ──TXT missing for the grace period──▶ unverified ──verify──▶ active
//      │                  (another organization verifying first fails the other claims)
//      ├──another organization verified first──▶ failed
//      └──claim period over──▶ expired
//
//   ssl_status: pending (queued) ──job──▶ issuing ──▶ active | failed (retried with backoff)
//
// The transitions a webhook will announce are one function each: claimVerified (domain.verified),
// domainUnverified (domain.unverified), certificateIssued (domain.certificate_issued) and
// certificateFailed (domain.certificate_failed).
import type { Knex } from 'knex';
import type { Sealer } from '../at-rest.js';
import type { AppContext } from '../context.js';
import { emitEvent } from '../webhooks/events.js';
import { queueCertificate, type CertificatePayload } from './certificate-jobs.js';
import { saveCertificate, type IssuedCertificate } from './certificate-store.js';
import type { DomainRow } from './domain-row.js';

type DomainTransition =
  | 'verified'
  | 'claim_failed'
  | 'claim_expired'
  | 'unverified'
  | 'certificate_issuing'
  | 'certificate_issued'
  | 'certificate_failed';

/** Why a claim failed, as its verification.last_error says. */
const CLAIM_TAKEN = 'Another organization verified this host first; this claim can no longer be verified.';
const CLAIM_DISPLACED =
  'Another organization verified this host after its TXT record went missing; this domain no longer answers.';

function recorded(app: AppContext, transition: DomainTransition, row: DomainRow, extra: Record<string, unknown> = {}) {
  app.metrics.domainTransitions.inc({ transition });
  app.log.info(
    { domain_id: row.id, org_id: row.org_id, host: row.host, from: row.status, transition, ...extra },
    `domain ${transition}`,
  );
}

/** The data of the domain.* webhook events: the domain after the transition. */
function domainEventData(row: DomainRow) {
  return {
    ulid: row.ulid,
    host: row.host,
    status: row.status,
    ssl_status: row.ssl_status,
    verified_at: row.verified_at?.toISOString() ?? null,
    ssl_expires_at: row.ssl_expires_at?.toISOString() ?? null,
    ssl_error: row.ssl_error,
  };
}

/**
 * The live rows of a host, locked in id order (so two verifications of one host take turns). A
 * transaction that will call claimVerified takes these locks before its own row's: two
 * organizations verifying one host at once, each holding its own row first, deadlocked here.
 */
export async function lockHost(trx: Knex.Transaction, host: string): Promise<DomainRow[]> {
  return trx('domains')
    .whereRaw('lower(host) = ?', [host.toLowerCase()])
    .whereNull('deleted_at')
    .orderBy('id')
    .forUpdate()
    .select<DomainRow[]>('*');
}

/** A claim loses its host to another organization (domain `failed`). */
async function failClaim(
  app: AppContext,
  trx: Knex.Transaction,
  row: DomainRow,
  now: Date,
  reason: string,
): Promise<DomainRow> {
  const [updated] = await trx('domains')
    .where({ id: row.id })
    .update({ status: 'failed', is_primary: false, last_check_error: reason, updated_at: now })
    .returning<DomainRow[]>('*');
  recorded(app, 'claim_failed', row);
  return updated;
}

/**
 * The TXT record of a claim matched (pending, or unverified re-checked): it takes the host
 * (`active`) unless another organization holds it, in which case this claim fails. Taking the host
 * fails every other organization's claim on it, an unverified holder's included.
 */
export async function claimVerified(
  app: AppContext,
  trx: Knex.Transaction,
  row: DomainRow,
  now: Date,
  changes: Partial<Record<keyof DomainRow, unknown>> = {},
): Promise<DomainRow> {
  const rows = await lockHost(trx, row.host);
  const others = rows.filter((r) => r.id !== row.id);
  if (others.some((r) => r.status === 'active' || r.status === 'retired')) {
    return failClaim(app, trx, row, now, CLAIM_TAKEN);
  }
  for (const other of others) {
    if (other.status === 'pending') await failClaim(app, trx, other, now, CLAIM_TAKEN);
    else if (other.status === 'unverified') await failClaim(app, trx, other, now, CLAIM_DISPLACED);
  }
  const [updated] = await trx('domains')
    .where({ id: row.id })
    .update({
      ...changes,
      status: 'active',
      verified_at: now,
      claim_expires_at: null,
      last_checked_at: now,
      last_check_error: null,
      updated_at: now,
    })
    .returning<DomainRow[]>('*');
  recorded(app, 'verified', row);
  await emitEvent(trx, updated.org_id!, 'domain.verified', domainEventData(updated), now);
  return updated;
}

/** One claim past its claim period (`expired`), found when it is used. */
export async function expireClaim(app: AppContext, trx: Knex.Transaction, row: DomainRow, now: Date): Promise<void> {
  await trx('domains').where({ id: row.id, status: 'pending' }).update({ status: 'expired', updated_at: now });
  recorded(app, 'claim_expired', row, { claim_expires_at: row.claim_expires_at });
}

/** Every pending claim whose claim period is over becomes `expired` (the daily maintenance job). */
export async function expireClaims(app: AppContext, now: Date): Promise<number> {
  const expired = await app
    .db('domains')
    .where({ type: 'custom', status: 'pending' })
    .whereNull('deleted_at')
    .where('claim_expires_at', '<=', now)
    .update({ status: 'expired', updated_at: now })
    .returning<DomainRow[]>('*');
  for (const row of expired) recorded(app, 'claim_expired', { ...row, status: 'pending' });
  return expired.length;
}

/**
 * The daily re-check found no TXT record for the grace period: the domain becomes `unverified`. It
 * keeps the host (its codes answer until its certificate expires) but gets no renewals; a matching
 * re-check or verify makes it active again, unless another organization verified the host meanwhile.
 */
export async function domainUnverified(
  app: AppContext,
  trx: Knex.Transaction,
  row: DomainRow,
  now: Date,
  reason: string,
): Promise<void> {
  const [updated] = await trx('domains')
    .where({ id: row.id, status: 'active' })
    .update({ status: 'unverified', last_checked_at: now, last_check_error: reason, updated_at: now })
    .returning<DomainRow[]>('*');
  recorded(app, 'unverified', row, { txt_missing_since: row.txt_missing_since });
  if (updated) await emitEvent(trx, updated.org_id!, 'domain.unverified', domainEventData(updated), now);
}

/** The certificate job takes a domain (ssl_status issuing); null when it no longer wants one. */
export async function certificateIssuing(
  app: AppContext,
  payload: CertificatePayload,
  now: Date,
): Promise<DomainRow | null> {
  const [row] = await app
    .db('domains')
    .where({ id: payload.domain_id, org_id: payload.org_id, type: 'custom', status: 'active' })
    .whereNull('deleted_at')
    .update({ ssl_status: 'issuing', updated_at: now })
    .returning<DomainRow[]>('*');
  if (row) recorded(app, 'certificate_issuing', row, { reason: payload.reason });
  return row ?? null;
}

/** A new certificate is stored and served from now on (every process within a second, by NOTIFY). */
export async function certificateIssued(
  app: AppContext,
  sealer: Sealer,
  row: DomainRow,
  cert: IssuedCertificate,
  now: Date,
): Promise<void> {
  await app.db.transaction(async (trx) => {
    await saveCertificate(trx, sealer, row.id, cert);
    // This update is what tells every process's TLS cache to drop the old certificate.
    const [updated] = await trx('domains')
      .where({ id: row.id })
      .update({
        ssl_status: 'active',
        ssl_expires_at: cert.notAfter,
        ssl_error: null,
        ssl_failures: 0,
        updated_at: now,
      })
      .returning<DomainRow[]>('*');
    await emitEvent(trx, updated.org_id!, 'domain.certificate_issued', domainEventData(updated), now);
  });
  recorded(app, 'certificate_issued', row, { not_after: cert.notAfter });
}

/**
 * Issuance failed: ssl_status failed with the reason, and the next attempt queued at `retryAt`. A
 * certificate issued earlier keeps being served until it expires.
 */
export async function certificateFailed(
  app: AppContext,
  row: DomainRow,
  reason: string,
  now: Date,
  retryAt: Date,
): Promise<void> {
  await app.db.transaction(async (trx) => {
    const [updated] = await trx('domains')
      .where({ id: row.id })
      .update({ ssl_status: 'failed', ssl_error: reason, ssl_failures: row.ssl_failures + 1, updated_at: now })
      .returning<DomainRow[]>('*');
    await queueCertificate(trx, { org_id: row.org_id!, domain_id: row.id, reason: 'retry' }, retryAt);
    // Announced once per run of failures, not at every retry.
    if (row.ssl_failures === 0) {
      await emitEvent(trx, updated.org_id!, 'domain.certificate_failed', domainEventData(updated), now);
    }
  });
  app.metrics.domainTransitions.inc({ transition: 'certificate_failed' });
  app.log.warn(
    {
      domain_id: row.id,
      org_id: row.org_id,
      host: row.host,
      transition: 'certificate_failed',
      reason,
      retry_at: retryAt,
    },
    'domain certificate_failed',
  );
}
