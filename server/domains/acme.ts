// Certificate issuance over ACME (RFC 8555) with acme-client, answering HTTP-01 challenges: each
// challenge's key authorization is written to Postgres (acme_challenges), and the redirect listener
// of any process serves it at /.well-known/acme-challenge/<token>.
//
// acme-client keeps one axios instance for the whole process; it is configured here, once: a request
// timeout, no retries inside a request (a rate-limit answer can ask to wait hours, and the
// domain-certificate job retries with its own backoff instead), extra trusted CAs for a private ACME
// server (ACME_CA_FILE), a rate-limit answer turned into AcmeRateLimitedError, an account the server
// no longer knows into AcmeAccountGoneError, and a request that got no answer at all (connection
// refused, a name that does not resolve, a TLS failure, a timeout) into an error naming the URL and
// the cause. acme-client's own error handler reads the answer of a failed request and, when there is
// none, fails with "Cannot read properties of undefined (reading 'config')": the adapter below turns
// such a failure into an error without a request config, which that handler passes on untouched.
// axios is acme-client's own HTTP client (MIT), a direct dependency here only for getAdapter.
import https from 'node:https';
import tls from 'node:tls';
import acme from 'acme-client';
import axios, { type AxiosAdapter, type InternalAxiosRequestConfig } from 'axios';
import type { Knex } from 'knex';
import type { Sealer } from '../at-rest.js';
import type { Logger } from '../logger.js';
import {
  certificateDates,
  findAcmeAccount,
  forgetAcmeAccount,
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

/** The ACME server does not know the stored account (a reset server, a new directory): register again. */
class AcmeAccountGoneError extends Error {}

/** A request to the ACME server got no answer at all. */
class AcmeUnreachableError extends Error {}

const CONNECTION_PROBLEMS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'timed out',
  ECONNABORTED: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

function unreachable(err: unknown, config: InternalAxiosRequestConfig): AcmeUnreachableError {
  const e = err as { code?: string; message?: string };
  const what = (e.code && CONNECTION_PROBLEMS[e.code]) ?? e.message ?? String(err);
  const code = e.code && CONNECTION_PROBLEMS[e.code] ? ` (${e.code})` : '';
  return new AcmeUnreachableError(`${what}${code} on ${(config.method ?? 'get').toUpperCase()} ${config.url}`);
}

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
    const send: AxiosAdapter = axios.getAdapter(acme.axios.defaults.adapter);
    acme.axios.defaults.adapter = (config) =>
      send(config).catch((err: unknown) => {
        throw (err as { response?: unknown }).response ? err : unreachable(err, config);
      });
    acme.axios.interceptors.response.use((resp) => {
      const data = resp.data as { type?: string; detail?: string } | undefined;
      if (data?.type === 'urn:ietf:params:acme:error:accountDoesNotExist') {
        throw new AcmeAccountGoneError(`The ACME server no longer knows the account: ${data.detail ?? ''}`);
      }
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
  if (err instanceof AcmeRateLimitedError || err instanceof AcmeIssuanceError || err instanceof AcmeAccountGoneError)
    return err;
  if (err instanceof AcmeUnreachableError)
    return new AcmeIssuanceError(`${step}: the ACME server did not answer: ${err.message}`);
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
  private async client(): Promise<{ client: acme.Client; accountUrl: string }> {
    const { directoryUrl } = this.opts;
    const stored = await findAcmeAccount(this.db, this.sealer, directoryUrl);
    const backoff = { backoffAttempts: this.poll.attempts, backoffMin: this.poll.min, backoffMax: this.poll.max };
    if (stored) {
      const client = new acme.Client({
        directoryUrl,
        accountKey: stored.accountKeyPem,
        accountUrl: stored.accountUrl,
        ...backoff,
      });
      return { client, accountUrl: stored.accountUrl };
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
    const accountUrl = client.getAccountUrl();
    await saveAcmeAccount(this.db, this.sealer, directoryUrl, { accountUrl, accountKeyPem });
    this.log.info({ acme_directory: directoryUrl }, 'acme account registered');
    return { client, accountUrl };
  }

  /**
   * Orders, proves (HTTP-01) and downloads a certificate for one host. When the ACME server no
   * longer knows the stored account, the account is forgotten, registered again, and the order
   * made once more.
   */
  async issue(host: string): Promise<IssuedCertificate> {
    const first = await this.client();
    try {
      return await this.issueWith(first.client, host);
    } catch (err) {
      if (!(err instanceof AcmeAccountGoneError)) throw err;
      this.log.warn(
        { acme_directory: this.opts.directoryUrl, account_url: first.accountUrl, err: err.message },
        'acme account unknown to the server: registering again',
      );
      await forgetAcmeAccount(this.db, this.opts.directoryUrl, first.accountUrl);
    }
    const again = await this.client();
    try {
      return await this.issueWith(again.client, host);
    } catch (err) {
      throw err instanceof AcmeAccountGoneError ? new AcmeIssuanceError(err.message) : err;
    }
  }

  private async issueWith(client: acme.Client, host: string): Promise<IssuedCertificate> {
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
