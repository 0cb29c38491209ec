// ACME issuance against a real ACME server (pebble) on loopback: the HTTP-01 challenge is served from
// Postgres by the challenge responder, pebble resolves the host through the test DNS server, the
// certificate is stored sealed and served by SNI.
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { expect } from 'chai';
import { Sealer } from '../../server/at-rest.js';
import { AcmeIssuanceError, AcmeIssuer } from '../../server/domains/acme.js';
import { findServingCertificate, saveCertificate } from '../../server/domains/certificate-store.js';
import { ACME_CHALLENGE_PREFIX, answerAcmeChallenge } from '../../server/redirect/acme-challenge.js';
import { CertificateCache, createTlsServer } from '../../server/redirect/tls.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { startPebble, type Pebble } from '../helpers/pebble.js';
import { createTestCa } from '../helpers/test-certs.js';

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
}

/** The certificate a TLS server presents for a server name, and whether it verified against `ca`. */
function handshake(
  port: number,
  servername: string,
  ca: string[],
): Promise<{ cert: tls.PeerCertificate; authorized: boolean; error: Error | null }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, ca, rejectUnauthorized: false }, () => {
      resolve({
        cert: socket.getPeerCertificate(),
        authorized: socket.authorized,
        error: socket.authorizationError ?? null,
      });
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('domains: ACME issuance with pebble', function () {
  this.timeout(120_000);
  let dns: TestDnsServer;
  let svc: TestService;
  let pebble: Pebble;
  let challengeServer: http.Server;
  let sealer: Sealer;
  let issuer: AcmeIssuer;
  const host = `go.${crypto.randomBytes(4).toString('hex')}.customer.test`;

  before(async () => {
    dns = await startDnsServer();
    svc = await startTestService({ api: false });
    challengeServer = http.createServer((req, res) => {
      if ((req.url ?? '').startsWith(ACME_CHALLENGE_PREFIX)) void answerAcmeChallenge(svc.app.db, req, res, new Date());
      else res.writeHead(404).end();
    });
    const port = await listen(challengeServer);
    pebble = await startPebble({ httpPort: port, dnsServer: dns.address });
    sealer = new Sealer(svc.app.secretKey);
    issuer = new AcmeIssuer(svc.app.db, sealer, svc.app.log, {
      directoryUrl: pebble.directoryUrl,
      caPem: pebble.listenerCaPem,
      contactEmail: null,
      poll: { attempts: 10, minMs: 200, maxMs: 2000 },
    });
  });
  after(async () => {
    await pebble?.close();
    challengeServer?.close();
    await svc?.close();
    await dns?.close();
  });

  it('issues a certificate through a real HTTP-01 validation and serves it by SNI', async () => {
    dns.setA(host, '127.0.0.1');
    const cert = await issuer.issue(host);
    expect(cert.notAfter.getTime()).to.be.greaterThan(Date.now() + 7 * 86_400_000);
    const leaf = new crypto.X509Certificate(cert.certificatePem);
    expect(leaf.subjectAltName).to.equal(`DNS:${host}`);
    expect(leaf.checkPrivateKey(crypto.createPrivateKey(cert.privateKeyPem))).to.equal(true);
    expect(await svc.app.db('acme_challenges').select('token')).to.deep.equal([]);

    // Stored sealed: neither the key nor its base64 body appears in the row.
    const [{ id }] = await svc.app
      .db('domains')
      .insert({ ulid: 'D'.repeat(26), org_id: (await svc.createOrg()).org.id, host, type: 'custom', status: 'active' })
      .returning('id');
    await saveCertificate(svc.app.db, sealer, id, cert);
    const row = await svc.app.db('domain_certificates').where({ domain_id: id }).first();
    const keyBody = cert.privateKeyPem.split('\n').slice(1, -2).join('');
    expect(row.private_key_sealed.includes(Buffer.from(keyBody))).to.equal(false);
    expect(row.private_key_sealed.includes(Buffer.from('PRIVATE KEY'))).to.equal(false);
    expect(
      (await svc.app.db('acme_accounts').first()).account_key_sealed.includes(Buffer.from('PRIVATE KEY')),
    ).to.equal(false);

    const fallback = await (await createTestCa('fallback CA')).issue({ dns: ['localhost'] });
    const certificates = new CertificateCache(
      (h) => findServingCertificate(svc.app.db, sealer, h, new Date()),
      svc.app.notify,
      svc.app.secretKey,
    );
    await certificates.start();
    const server = createTlsServer(
      { defaultCertificate: { certificatePem: fallback.certPem, privateKeyPem: fallback.keyPem }, certificates },
      (_req, res) => res.writeHead(302, { Location: 'https://example.com/' }).end(),
    );
    const port = await listen(server);
    try {
      const served = await handshake(port, host, [pebble.rootPem, pebble.intermediatePem]);
      expect(served.error).to.equal(null);
      expect(served.authorized).to.equal(true);
      expect(served.cert.fingerprint256).to.equal(leaf.fingerprint256);
      const unknown = await handshake(port, 'unknown.example.test', [pebble.rootPem]);
      expect(unknown.authorized).to.equal(false);
      expect(unknown.cert.subjectaltname).to.equal('DNS:localhost');
      const status = await new Promise<number>((resolve, reject) => {
        https
          .get(
            {
              host: '127.0.0.1',
              port,
              servername: host,
              headers: { host },
              ca: [pebble.rootPem, pebble.intermediatePem],
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          )
          .on('error', reject);
      });
      expect(status).to.equal(302);
    } finally {
      server.close();
    }
  });

  it('fails with the ACME server’s reason when the challenge cannot be reached', async () => {
    const unreachable = `down.${crypto.randomBytes(4).toString('hex')}.customer.test`;
    // The name resolves to an address where nothing answers HTTP.
    dns.setA(unreachable, '127.0.0.2');
    const err = await issuer.issue(unreachable).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(AcmeIssuanceError);
    expect((err as Error).message).to.match(
      /could not validate the HTTP-01 challenge: .*(connect|refused|127\.0\.0\.2)/i,
    );
  });
});
