// Certificate issuance over ACME (RFC 8555) with acme-client, answering HTTP-01 challenges: each
// challenge's key authorization is written to Postgres (acme_challenges), and the redirect listener
// of any process serves it at /.well-known/acme-challenge/<token>.
//
// acme-client keeps one axios instance for the whole process; it is configured here, once: a request
// timeout, no retries inside a request (a rate-limit answer can ask to wait hours, and the
// domain-certificate job retries with its own backoff instead), extra trusted CAs for a private ACME
// server (ACME_CA_FILE), and a rate-limit answer turned into AcmeRateLimitedError.
import https from 'node:https';
import tls from 'node:tls';
import acme from 'acme-client';
import type { Knex } from 'knex';
import type { Sealer } from '../at-rest.js';
import type { Logger } from '../logger.js';
import {
  certificateDates,
  findAcmeAccount,
  putChallenge,
  removeChallenge,
  saveAcmeAccount,
  type IssuedCertificate,
} from './certificate-store.js';

/** The ACME server answered 429 (urn:ietf:params:acme:error:rateLimited): try again after that long. */
export class AcmeRateLimitedError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
  }
}

/** Issuance failed for a reason worth showing to the domain's owner (ssl_error). */
export class AcmeIssuanceError extends Error {}

export interface AcmeOptions {
  directoryUrl: string;
  /** PEM of extra CAs trusted for the directory's HTTPS (a private ACME server); null: system roots. */
  caPem: string | null;
  /** Contact address registered with the ACME account; null: none. */
  contactEmail: string | null;
  /** Polling of an order or challenge until the ACME server decides. */
  poll?: { attempts: number; minMs: number; maxMs: number };
}

const REQUEST_TIMEOUT_MS = 30_000;
const CHALLENGE_TTL_MS = 60 * 60_000;

let configuredCa: string | null | undefined;

function retryAfterSeconds(header: unknown): number | null {
  if (typeof header !== 'string' || !header.trim()) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

function configureHttp(caPem: string | null): void {
  if (configuredCa === undefined) {
    acme.axios.defaults.timeout = REQUEST_TIMEOUT_MS;
    (acme.axios.defaults as { acmeSettings?: { retryMaxAttempts: number } }).acmeSettings!.retryMaxAttempts = 0;
    acme.axios.interceptors.response.use((resp) => {
      const data = resp.data as { type?: string; detail?: string } | undefined;
      if (resp.status === 429 || data?.type === 'urn:ietf:params:acme:error:rateLimited') {
        throw new AcmeRateLimitedError(
          `The ACME server is rate limiting: ${data?.detail ?? `HTTP ${resp.status}`}`,
          retryAfterSeconds(resp.headers['retry-after']),
        );
      }
      return resp;
    });
  }
  if (configuredCa !== caPem) {
    acme.axios.defaults.httpsAgent = caPem
      ? new https.Agent({ ca: [...tls.rootCertificates, caPem], keepAlive: true })
      : new https.Agent({ keepAlive: true });
    configuredCa = caPem;
  }
}

/** Turns acme-client's errors (the ACME problem detail as the message) into a readable reason. */
function reason(step: string, err: unknown): Error {
  if (err instanceof AcmeRateLimitedError || err instanceof AcmeIssuanceError) return err;
  const e = err as { message?: string; code?: string };
  const detail = (e.message || e.code || String(err)).slice(0, 500);
  return new AcmeIssuanceError(`${step}: ${detail}`);
}

export class AcmeIssuer {
  private readonly poll: { attempts: number; min: number; max: number };

  constructor(
    private readonly db: Knex,
    private readonly sealer: Sealer,
    private readonly log: Logger,
    private readonly opts: AcmeOptions,
  ) {
    configureHttp(opts.caPem);
    const p = opts.poll ?? { attempts: 10, minMs: 1000, maxMs: 10_000 };
    this.poll = { attempts: p.attempts, min: p.minMs, max: p.maxMs };
  }

  /** A client on this directory's account, registering the account the first time. */
  private async client(): Promise<acme.Client> {
    const { directoryUrl } = this.opts;
    const stored = await findAcmeAccount(this.db, this.sealer, directoryUrl);
    const backoff = { backoffAttempts: this.poll.attempts, backoffMin: this.poll.min, backoffMax: this.poll.max };
    if (stored) {
      return new acme.Client({
        directoryUrl,
        accountKey: stored.accountKeyPem,
        accountUrl: stored.accountUrl,
        ...backoff,
      });
    }
    const accountKeyPem = (await acme.crypto.createPrivateEcdsaKey('P-256')).toString('utf8');
    const client = new acme.Client({ directoryUrl, accountKey: accountKeyPem, ...backoff });
    try {
      await client.createAccount({
        termsOfServiceAgreed: true,
        ...(this.opts.contactEmail ? { contact: [`mailto:${this.opts.contactEmail}`] } : {}),
      });
    } catch (err) {
      throw reason('Registering the ACME account failed', err);
    }
    await saveAcmeAccount(this.db, this.sealer, directoryUrl, { accountUrl: client.getAccountUrl(), accountKeyPem });
    this.log.info({ acme_directory: directoryUrl }, 'acme account registered');
    return client;
  }

  /** Orders, proves (HTTP-01) and downloads a certificate for one host. */
  async issue(host: string): Promise<IssuedCertificate> {
    const client = await this.client();
    const privateKey = await acme.crypto.createPrivateEcdsaKey('P-256');
    const [, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, privateKey);
    let order: acme.Order;
    try {
      order = await client.createOrder({ identifiers: [{ type: 'dns', value: host }] });
    } catch (err) {
      throw reason('The ACME server refused the order', err);
    }
    const authorizations = await client.getAuthorizations(order).catch((err: unknown) => {
      throw reason('Reading the ACME authorizations failed', err);
    });
    for (const authz of authorizations) {
      if (authz.status === 'valid') continue;
      const challenge = authz.challenges.find((c) => c.type === 'http-01');
      if (!challenge) throw new AcmeIssuanceError('The ACME server offered no HTTP-01 challenge.');
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      await putChallenge(this.db, {
        token: challenge.token,
        host: authz.identifier.value,
        keyAuthorization,
        expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS),
      });
      try {
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(challenge);
      } catch (err) {
        throw reason('The ACME server could not validate the HTTP-01 challenge', err);
      } finally {
        await removeChallenge(this.db, challenge.token);
      }
    }
    let certificatePem: string;
    try {
      const finalized = await client.finalizeOrder(order, csr);
      certificatePem = await client.getCertificate(finalized);
    } catch (err) {
      throw reason('Finalizing the ACME order failed', err);
    }
    return { certificatePem, privateKeyPem: privateKey.toString('utf8'), ...certificateDates(certificatePem) };
  }
}
