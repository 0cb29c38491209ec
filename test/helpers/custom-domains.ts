// Custom domains in tests, the way a customer gets one: the test DNS server holds the host's A record
// and its ownership TXT record, the domain is claimed and verified through the API, and HTTPS
// requests reach the redirect's TLS port with SNI (certificates from pebble, test/helpers/pebble.ts).
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { expect } from 'chai';
import type { Runner } from 'graphile-worker';
import { verificationToken } from '../../server/domains/service.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { startWorker } from '../../workers/index.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startTestService, type TestOrg, type TestService } from './harness.js';
import { freePort, startPebble, type Pebble } from './pebble.js';
import { createTestCa } from './test-certs.js';

/** What serves custom domains over HTTPS in a test: DNS, pebble, the service, its redirect with TLS, the worker. */
export interface HttpsStack {
  dns: TestDnsServer;
  pebble: Pebble;
  svc: TestService;
  redirect: RedirectListener;
  worker: Runner;
  /** Pebble's root and intermediate: what verifies the certificates it issues. */
  trusted: string[];
  close(): Promise<void>;
}

/**
 * The test DNS server, pebble (its HTTP-01 validations sent to the redirect's plain port, its DNS
 * questions to the test DNS server), a service configured for both, the redirect listener with
 * an HTTPS port (a certificate of its own for hosts without one) and graphile-worker running the
 * certificate jobs. The first run on a fresh machine installs pebble with apt-get.
 */
export async function startHttpsStack(): Promise<HttpsStack> {
  const dns = await startDnsServer();
  const httpPort = await freePort();
  const pebble = await startPebble({ httpPort, dnsServer: dns.address });
  const svc = await startTestService({
    config: {
      dnsResolvers: [dns.address],
      acmeDirectoryUrl: pebble.directoryUrl,
      acmeCaFile: pebble.listenerCaFile,
      // The tests poll domains every 100 ms on a loaded machine: not the plan's minute window.
      platformRateLimitPerMin: 10_000,
    },
  });
  const fallback = await (await createTestCa('fallback host CA')).issue({ dns: ['localhost'] });
  const redirect = await startRedirectListener(svc.app, httpPort, '127.0.0.1', {
    flushMs: 50,
    tlsPort: 0,
    defaultCertificate: { certificatePem: fallback.certPem, privateKeyPem: fallback.keyPem },
  });
  const worker = await startWorker(svc.app);
  return {
    dns,
    pebble,
    svc,
    redirect,
    worker,
    trusted: [pebble.rootPem, pebble.intermediatePem],
    async close() {
      await worker.stop();
      await svc.close();
      await pebble.close();
      await dns.close();
    },
  };
}

/**
 * A custom domain of `org`, verified at once (POST /v1/domains with verify: true) after the DNS
 * server was given its A record (`address`) and TXT record. Returns the domain's payload.
 */
export async function addVerifiedDomain(
  svc: TestService,
  dns: TestDnsServer,
  org: TestOrg,
  host: string,
  address = '127.0.0.1',
): Promise<Record<string, any>> {
  dns.setA(host, address);
  dns.setTxt(`_qr-verify.${host}`, [verificationToken(svc.app, org.org, host)]);
  const created = await svc.post('/v1/domains', org.token, { host, verify: true });
  expect(created.status, created.text).to.equal(201);
  expect(created.body.data.status).to.equal('active');
  return created.body.data;
}

/** Polls a domain until `done` holds; fails with the last state (and `more()`, e.g. pebble's output) at the deadline. */
export async function domainUntil(
  svc: TestService,
  org: TestOrg,
  ulid: string,
  done: (d: Record<string, any>) => boolean,
  opts: { ms?: number; more?: () => string } = {},
): Promise<Record<string, any>> {
  const deadline = Date.now() + (opts.ms ?? 30_000);
  for (;;) {
    const d = (await svc.get(`/v1/domains/${ulid}`, org.token)).body.data;
    if (done(d)) return d;
    if (Date.now() > deadline)
      expect.fail(`domain never reached the expected state: ${JSON.stringify(d)}\n${opts.more?.() ?? ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface TlsAnswer {
  status: number;
  location: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  fingerprint: string;
  subject: string;
  /** Whether the certificate chains to `ca` and names the host. */
  authorized: boolean;
  body: string;
}

/** GET over TLS to the redirect's HTTPS port on 127.0.0.1, with SNI and Host `servername`, checking the chain against `ca`. */
export function tlsGet(port: number, servername: string, path: string, ca: string[]): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path,
        servername,
        headers: { host: servername },
        ca,
        agent: false,
        rejectUnauthorized: false,
      },
      (res) => {
        const socket = res.socket as TLSSocket;
        const cert = socket.getPeerCertificate();
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            headers: res.headers,
            fingerprint: cert.fingerprint256,
            subject: cert.subjectaltname ?? '',
            authorized: socket.authorized,
            body,
          }),
        );
      },
    );
    req.on('error', reject);
  });
}
