// The daily domain maintenance (the domain-maintenance crontab job): claims past their period
// expire, every verified custom domain's TXT record is checked again, and certificates that expire
// within the renewal window are queued for renewal.
//
// A TXT re-check that finds no record starts (or continues) a grace period (DOMAIN_TXT_GRACE_HOURS,
// default 72 h); a domain whose record is still missing after it becomes unverified. A lookup that
// fails (timeout, SERVFAIL) proves nothing and changes nothing. A record found again ends the grace
// period, and an unverified domain whose record is back is verified again.
import type { AppContext } from '../context.js';
import { queueCertificate, RENEWAL_WINDOW_MS } from './certificate-jobs.js';
import { checkTxt, type TxtCheck } from './dns-check.js';
import { SERVING_STATUSES, type DomainRow } from './domain-row.js';
import { claimVerified, domainUnverified, expireClaims, lockHost } from './lifecycle.js';
import { TXT_PREFIX } from './service.js';

export interface MaintenanceReport {
  expired: number;
  checked: number;
  missing: number;
  unverified: number;
  reverified: number;
  renewals: number;
}

/** TXT lookups at once. */
const CONCURRENCY = 8;

async function recheck(app: AppContext, row: DomainRow, check: TxtCheck, report: MaintenanceReport): Promise<void> {
  const now = app.clock.now();
  if (check.matched) {
    if (row.status === 'unverified') {
      const back = await app.db.transaction(async (trx) => {
        await lockHost(trx, row.host);
        const locked = await trx('domains')
          .where({ id: row.id, status: 'unverified' })
          .forUpdate()
          .first<DomainRow>('*');
        if (!locked) return null;
        const verified = await claimVerified(app, trx, locked, now, { txt_missing_since: null, ssl_status: 'pending' });
        if (verified.status === 'active') {
          await queueCertificate(trx, { org_id: verified.org_id!, domain_id: verified.id, reason: 'verified' });
        }
        return verified;
      });
      if (back?.status === 'active') report.reverified++;
    } else if (row.txt_missing_since || row.last_check_error) {
      await app
        .db('domains')
        .where({ id: row.id })
        .update({ txt_missing_since: null, last_checked_at: now, last_check_error: null });
    }
    return;
  }
  if (check.transient || row.status !== 'active') return;
  report.missing++;
  const since = row.txt_missing_since ?? now;
  const graceMs = app.config.domainTxtGraceHours * 3600_000;
  if (now.getTime() - since.getTime() < graceMs) {
    await app
      .db('domains')
      .where({ id: row.id })
      .update({ txt_missing_since: since, last_checked_at: now, last_check_error: check.reason });
    return;
  }
  await app.db.transaction(async (trx) => {
    const locked = await trx('domains').where({ id: row.id, status: 'active' }).forUpdate().first<DomainRow>('*');
    if (!locked) return;
    await domainUnverified(
      app,
      trx,
      locked,
      now,
      `${check.reason} The record has been missing since ${since.toISOString()}; the domain is unverified ` +
        'and its certificate is no longer renewed. Publish the record and verify again.',
    );
    report.unverified++;
  });
}

export async function runDomainMaintenance(app: AppContext): Promise<MaintenanceReport> {
  const report: MaintenanceReport = { expired: 0, checked: 0, missing: 0, unverified: 0, reverified: 0, renewals: 0 };
  const started = app.clock.now();
  report.expired = await expireClaims(app, started);

  const verified = await app
    .db('domains')
    .where({ type: 'custom' })
    .whereIn('status', SERVING_STATUSES)
    .whereNull('deleted_at')
    .orderBy('id')
    .select<DomainRow[]>('*');
  for (let i = 0; i < verified.length; i += CONCURRENCY) {
    await Promise.all(
      verified.slice(i, i + CONCURRENCY).map(async (row) => {
        const check = await checkTxt(
          app.config.dnsResolvers,
          row.verification.txt_record_name ?? TXT_PREFIX + row.host,
          row.verification.txt_record_value ?? '',
        );
        report.checked++;
        await recheck(app, row, check, report);
      }),
    );
  }

  // Renewals: active domains whose certificate expires within the window, or that have none yet
  // (a failed first issuance is retried at least daily this way).
  const due = await app
    .db('domains')
    .where({ type: 'custom', status: 'active' })
    .whereNull('deleted_at')
    .whereNot('ssl_status', 'issuing')
    .where((q) =>
      q.whereNull('ssl_expires_at').orWhere('ssl_expires_at', '<', new Date(started.getTime() + RENEWAL_WINDOW_MS)),
    )
    .select<{ id: number; org_id: number }[]>('id', 'org_id');
  for (const d of due) await queueCertificate(app.db, { org_id: d.org_id, domain_id: d.id, reason: 'renewal' });
  report.renewals = due.length;
  app.log.info(report, 'domain maintenance done');
  return report;
}
