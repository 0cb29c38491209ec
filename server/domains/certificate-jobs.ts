// The domain-certificate job: how it is queued. One job key and one queue per domain, so repeated
// requests keep one pending job and two attempts for one domain never run at once.
import type { Knex } from 'knex';
import { enqueueJob } from '../jobs.js';

export const CERTIFICATE_TASK = 'domain-certificate';

/** Certificates are renewed when they expire within this long (the daily maintenance queues them). */
export const RENEWAL_WINDOW_MS = 30 * 86_400_000;

type CertificateReason = 'verified' | 'refresh' | 'renewal' | 'retry';

export interface CertificatePayload {
  org_id: number;
  domain_id: number;
  reason: CertificateReason;
}

export async function queueCertificate(
  db: Knex | Knex.Transaction,
  payload: CertificatePayload,
  runAt?: Date,
): Promise<void> {
  const key = `${CERTIFICATE_TASK}:${payload.domain_id}`;
  await enqueueJob(db, CERTIFICATE_TASK, { ...payload }, { jobKey: key, queueName: key, runAt });
}
