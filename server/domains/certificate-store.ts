// Data access for what ACME issuance keeps in Postgres: the account per directory, HTTP-01
// challenges in flight, and the certificate each custom domain serves. Private keys go in and come out
// through the Sealer only; nothing here logs or returns a key except to the TLS listener that serves it.
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Sealer } from '../at-rest.js';
import { SERVING_STATUSES } from './domain-row.js';

type Db = Knex | Knex.Transaction;

export interface AcmeAccount {
  accountUrl: string;
  accountKeyPem: string;
}

const accountPurpose = (directoryUrl: string) => `acme-account:${directoryUrl}`;
const certificatePurpose = (domainId: number) => `certificate:${domainId}`;

/** The stored account for a directory, or null (none yet, or sealed under another SECRET_KEY). */
export async function findAcmeAccount(db: Db, sealer: Sealer, directoryUrl: string): Promise<AcmeAccount | null> {
  const row = await db('acme_accounts')
    .where({ directory_url: directoryUrl })
    .first<{ account_url: string; account_key_sealed: Buffer } | undefined>('account_url', 'account_key_sealed');
  if (!row) return null;
  try {
    return {
      accountUrl: row.account_url,
      accountKeyPem: sealer.open(row.account_key_sealed, accountPurpose(directoryUrl)).toString('utf8'),
    };
  } catch {
    return null;
  }
}

/** Stores (or replaces) the account of a directory. */
export async function saveAcmeAccount(
  db: Db,
  sealer: Sealer,
  directoryUrl: string,
  account: AcmeAccount,
): Promise<void> {
  await db('acme_accounts')
    .insert({
      directory_url: directoryUrl,
      account_url: account.accountUrl,
      account_key_sealed: sealer.seal(account.accountKeyPem, accountPurpose(directoryUrl)),
    })
    .onConflict('directory_url')
    .merge();
}

/** Drops a stored account the ACME server no longer knows (only that one: another may have replaced it). */
export async function forgetAcmeAccount(db: Db, directoryUrl: string, accountUrl: string): Promise<void> {
  await db('acme_accounts').where({ directory_url: directoryUrl, account_url: accountUrl }).delete();
}

export async function putChallenge(
  db: Db,
  challenge: { token: string; host: string; keyAuthorization: string; expiresAt: Date },
): Promise<void> {
  await db('acme_challenges')
    .insert({
      token: challenge.token,
      host: challenge.host.toLowerCase(),
      key_authorization: challenge.keyAuthorization,
      expires_at: challenge.expiresAt,
    })
    .onConflict('token')
    .merge();
}

export async function removeChallenge(db: Db, token: string): Promise<void> {
  await db('acme_challenges').where({ token }).delete();
}

/** The key authorization to answer for a token on a host, or null (unknown, other host, expired). */
export async function findChallenge(db: Db, host: string, token: string, now: Date): Promise<string | null> {
  const row = await db('acme_challenges')
    .where({ token, host: host.toLowerCase() })
    .where('expires_at', '>', now)
    .first<{ key_authorization: string } | undefined>('key_authorization');
  return row?.key_authorization ?? null;
}

/** Every challenge in flight for a host (token → key authorization and expiry), for the redirect's cache. */
export async function findHostChallenges(
  db: Db,
  host: string,
  now: Date,
): Promise<{ token: string; keyAuthorization: string; expiresAt: Date }[]> {
  const rows = await db('acme_challenges')
    .where({ host: host.toLowerCase() })
    .where('expires_at', '>', now)
    .select<{ token: string; key_authorization: string; expires_at: Date }[]>(
      'token',
      'key_authorization',
      'expires_at',
    );
  return rows.map((r) => ({
    token: r.token,
    keyAuthorization: r.key_authorization,
    expiresAt: new Date(r.expires_at),
  }));
}

export interface IssuedCertificate {
  /** Leaf first, then the chain. */
  certificatePem: string;
  privateKeyPem: string;
  notBefore: Date;
  notAfter: Date;
}

/** Validity dates of the leaf (the first certificate of a PEM chain). */
export function certificateDates(certificatePem: string): { notBefore: Date; notAfter: Date } {
  const leaf = new crypto.X509Certificate(certificatePem);
  return { notBefore: new Date(leaf.validFrom), notAfter: new Date(leaf.validTo) };
}

/** Stores the certificate a domain serves from now on (replacing the previous one). */
export async function saveCertificate(
  db: Db,
  sealer: Sealer,
  domainId: number,
  cert: IssuedCertificate,
): Promise<void> {
  await db('domain_certificates')
    .insert({
      domain_id: domainId,
      certificate_pem: cert.certificatePem,
      private_key_sealed: sealer.seal(cert.privateKeyPem, certificatePurpose(domainId)),
      not_before: cert.notBefore,
      not_after: cert.notAfter,
      created_at: new Date(),
    })
    .onConflict('domain_id')
    .merge();
}

export interface ServingCertificate {
  domainId: number;
  certificatePem: string;
  privateKeyPem: string;
  notAfter: Date;
}

/**
 * The certificate to serve for a host (SNI): a custom domain that is not deleted, still answers
 * (active, or unverified and not yet expired) and has an unexpired certificate. Null otherwise,
 * and when the key does not open (SECRET_KEY changed: the domain needs a new certificate).
 */
export async function findServingCertificate(
  db: Db,
  sealer: Sealer,
  host: string,
  now: Date,
): Promise<ServingCertificate | null> {
  const row = await db('domains as d')
    .join('domain_certificates as c', 'c.domain_id', 'd.id')
    .whereRaw('lower(d.host) = ?', [host.toLowerCase()])
    .whereNull('d.deleted_at')
    .where('d.type', 'custom')
    .whereIn('d.status', SERVING_STATUSES)
    .where('c.not_after', '>', now)
    .first<{ domain_id: number; certificate_pem: string; private_key_sealed: Buffer; not_after: Date } | undefined>(
      'c.domain_id',
      'c.certificate_pem',
      'c.private_key_sealed',
      'c.not_after',
    );
  if (!row) return null;
  const domainId = Number(row.domain_id);
  let privateKeyPem: string;
  try {
    privateKeyPem = sealer.open(row.private_key_sealed, certificatePurpose(domainId)).toString('utf8');
  } catch {
    return null;
  }
  return { domainId, certificatePem: row.certificate_pem, privateKeyPem, notAfter: new Date(row.not_after) };
}
