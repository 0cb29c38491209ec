// domain-certificate: issue or renew the TLS certificate of a verified custom domain through ACME
// (server/domains/acme.ts). Queued by a successful ownership check, by PATCH refresh_ssl, by the daily
// domain-maintenance job (renewals) and by itself (retries), with the job key and queue
// domain-certificate:<id>: one pending job per domain, never two running at once.
//
// Idempotent: a domain that was deleted or is no longer active is skipped; one whose certificate is
// still good beyond the renewal window is left as it is unless the owner asked for a new one.
// A failure sets ssl_status failed with the reason and queues the next attempt with exponential
// backoff (5 minutes doubling, at most a day), later when the ACME server asked to wait longer.
import fs from 'node:fs/promises';
import type { Task } from 'graphile-worker';
import { Sealer } from '../../server/at-rest.js';
import type { AppContext } from '../../server/context.js';
import { AcmeIssuanceError, AcmeIssuer, AcmeRateLimitedError, type AcmeOptions } from '../../server/domains/acme.js';
import { RENEWAL_WINDOW_MS, type CertificatePayload } from '../../server/domains/certificate-jobs.js';
import type { DomainRow } from '../../server/domains/domain-row.js';
import { certificateFailed, certificateIssued, certificateIssuing } from '../../server/domains/lifecycle.js';

const FIRST_RETRY_MS = 5 * 60_000;
const MAX_RETRY_MS = 86_400_000;

function isPayload(p: unknown): p is CertificatePayload {
  const o = p as Partial<CertificatePayload> | null;
  return typeof o === 'object' && o !== null && Number.isSafeInteger(o.org_id) && Number.isSafeInteger(o.domain_id);
}

export type CertificateOutcome = 'skipped' | 'current' | 'issued' | 'failed';

/** When to try again after the n-th failure in a row (n >= 1), or later if the ACME server says so. */
export function retryDelayMs(failures: number, retryAfterSeconds: number | null = null): number {
  const backoff = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(20, Math.max(0, failures - 1)));
  return Math.max(backoff, (retryAfterSeconds ?? 0) * 1000);
}

/** The ACME settings of this service (ACME_DIRECTORY_URL, ACME_CA_FILE, ACME_CONTACT_EMAIL). */
async function acmeOptions(app: AppContext): Promise<AcmeOptions> {
  const { acmeDirectoryUrl, acmeCaFile, acmeContactEmail } = app.config;
  return {
    directoryUrl: acmeDirectoryUrl,
    caPem: acmeCaFile ? await fs.readFile(acmeCaFile, 'utf8') : null,
    contactEmail: acmeContactEmail || null,
  };
}

/** The task's work, callable from tests without a worker. */
export async function runDomainCertificate(
  app: AppContext,
  payload: CertificatePayload,
  opts: Partial<AcmeOptions> = {},
): Promise<CertificateOutcome> {
  const now = app.clock.now();
  const current = await app
    .db('domains as d')
    .leftJoin('domain_certificates as c', 'c.domain_id', 'd.id')
    .where({ 'd.id': payload.domain_id, 'd.org_id': payload.org_id, 'd.type': 'custom', 'd.status': 'active' })
    .whereNull('d.deleted_at')
    .first<{ not_after: Date | null } | undefined>('c.not_after');
  // Deleted, or no longer verified, since the job was queued: nothing to issue.
  if (!current) return 'skipped';
  if (
    payload.reason !== 'refresh' &&
    current.not_after &&
    current.not_after.getTime() - now.getTime() > RENEWAL_WINDOW_MS
  ) {
    await app
      .db('domains')
      .where({ id: payload.domain_id })
      .update({ ssl_status: 'active', ssl_expires_at: current.not_after, ssl_error: null, updated_at: now });
    return 'current';
  }
  const row: DomainRow | null = await certificateIssuing(app, payload, now);
  if (!row) return 'skipped';
  const sealer = new Sealer(app.secretKey);
  try {
    const issuer = new AcmeIssuer(app.db, sealer, app.log, { ...(await acmeOptions(app)), ...opts });
    const cert = await issuer.issue(row.host);
    await certificateIssued(app, sealer, row, cert, app.clock.now());
    return 'issued';
  } catch (err) {
    const failures = row.ssl_failures + 1;
    const known = err instanceof AcmeIssuanceError || err instanceof AcmeRateLimitedError;
    if (!known) app.log.error({ err, domain_id: row.id, host: row.host }, 'certificate issuance failed unexpectedly');
    const reason = known ? err.message : `Certificate issuance failed: ${(err as Error).message ?? String(err)}`;
    const wait = retryDelayMs(failures, err instanceof AcmeRateLimitedError ? err.retryAfterSeconds : null);
    const at = app.clock.now();
    await certificateFailed(app, row, reason.slice(0, 1000), at, new Date(at.getTime() + wait));
    return 'failed';
  }
}

export const domainCertificate =
  (app: AppContext): Task =>
  async (payload) => {
    if (!isPayload(payload)) {
      app.log.error({ payload }, 'domain-certificate: malformed payload, dropped');
      return;
    }
    await runDomainCertificate(app, payload);
  };
