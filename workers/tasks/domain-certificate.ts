// domain-certificate: issue or renew the TLS certificate of a verified custom domain. Queued by a
// successful ownership check and by PATCH refresh_ssl, with the job key domain-certificate:<id>.
//
// ACME issuance (ACME_DIRECTORY_URL) is not built yet. Until it is, the task checks that the domain
// still wants a certificate and leaves ssl_status at 'pending', saying so in the log: it never
// reports a certificate it does not have. Running it twice changes nothing more than running it once.
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../server/context.js';

export interface DomainCertificatePayload {
  org_id: number;
  domain_id: number;
  reason: 'verified' | 'refresh' | 'renewal';
}

function isPayload(p: unknown): p is DomainCertificatePayload {
  const o = p as Partial<DomainCertificatePayload> | null;
  return typeof o === 'object' && o !== null && Number.isSafeInteger(o.org_id) && Number.isSafeInteger(o.domain_id);
}

export type CertificateOutcome = 'skipped' | 'issuance_unavailable';

/** The task's work, callable from tests without a worker. */
export async function runDomainCertificate(
  app: AppContext,
  payload: DomainCertificatePayload,
): Promise<CertificateOutcome> {
  const domain = await app
    .db('domains')
    .where({ id: payload.domain_id, org_id: payload.org_id, type: 'custom' })
    .whereNull('deleted_at')
    .first<{ id: number; host: string; status: string; ssl_status: string } | undefined>(
      'id',
      'host',
      'status',
      'ssl_status',
    );
  // Deleted or no longer verified since the job was queued: nothing to issue.
  if (!domain || domain.status !== 'active' || domain.ssl_status !== 'pending') return 'skipped';
  app.log.warn(
    { domain_id: domain.id, host: domain.host, reason: payload.reason, acme_directory: app.config.acmeDirectoryUrl },
    'certificate issuance is not available in this version; ssl_status stays pending',
  );
  return 'issuance_unavailable';
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
