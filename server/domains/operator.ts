// The operator's view of domains (qrctl domains list / check): every organization's, with the
// certificate and ownership-check state. Never a key: only what the API shows, plus the owner slug.
import type { AppContext } from '../context.js';
import { checkTxt, type TxtCheck } from './dns-check.js';
import type { DomainRow } from './domain-row.js';
import { normalizeHost } from './hostname.js';
import { TXT_PREFIX } from './service.js';

export interface OperatorDomain {
  ulid: string;
  host: string;
  organization: string | null;
  type: string;
  status: string;
  ssl_status: string;
  ssl_expires_at: Date | null;
  ssl_error: string | null;
  last_error: string | null;
  last_checked_at: Date | null;
  txt_missing_since: Date | null;
  verified_at: Date | null;
  claim_expires_at: Date | null;
}

type Row = DomainRow & { org_slug: string | null };

function present(r: Row): OperatorDomain {
  return {
    ulid: r.ulid,
    host: r.host,
    organization: r.org_slug,
    type: r.type,
    status: r.status,
    ssl_status: r.ssl_status,
    ssl_expires_at: r.ssl_expires_at,
    ssl_error: r.ssl_error,
    last_error: r.last_check_error,
    last_checked_at: r.last_checked_at,
    txt_missing_since: r.txt_missing_since,
    verified_at: r.verified_at,
    claim_expires_at: r.claim_expires_at,
  };
}

function live(app: AppContext) {
  return app
    .db('domains as d')
    .leftJoin('organizations as o', 'o.id', 'd.org_id')
    .whereNull('d.deleted_at')
    .orderBy('d.id')
    .select<Row[]>('d.*', 'o.slug as org_slug');
}

export async function listAllDomains(app: AppContext): Promise<OperatorDomain[]> {
  return (await live(app)).map(present);
}

export interface DomainCheck extends OperatorDomain {
  /** The TXT record looked up now (custom domains). */
  txt: { name: string; matched: boolean; reason: string | null } | null;
  certificate: { not_before: Date; not_after: Date } | null;
}

/** Every live row of a host (claims of several organizations included) with a TXT lookup made now. */
export async function checkDomainHost(app: AppContext, input: string): Promise<DomainCheck[]> {
  const normalized = normalizeHost(input.toLowerCase());
  const host = normalized.ok ? normalized.host : input.toLowerCase();
  const rows = await live(app).whereRaw('lower(d.host) = ?', [host]);
  return Promise.all(
    rows.map(async (r) => {
      let txt: DomainCheck['txt'] = null;
      if (r.type === 'custom') {
        const name = r.verification.txt_record_name ?? TXT_PREFIX + r.host;
        const check: TxtCheck = await checkTxt(app.config.dnsResolvers, name, r.verification.txt_record_value ?? '');
        txt = { name, matched: check.matched, reason: check.matched ? null : check.reason };
      }
      const cert = await app
        .db('domain_certificates')
        .where({ domain_id: r.id })
        .first<{ not_before: Date; not_after: Date } | undefined>('not_before', 'not_after');
      return { ...present(r), txt, certificate: cert ?? null };
    }),
  );
}
