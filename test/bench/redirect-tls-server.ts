// The service side of `make bench-redirect-tls`: boots the stores from the environment, creates a
// custom domain (BENCH_HOST) holding the certificate of BENCH_CERT_FILE / BENCH_KEY_FILE (stored
// sealed, as issuance stores it), a code `go` on it, and serves the redirect over plain HTTP and TLS
// (the same files as the default certificate). The domain's https_redirect is off, so plain HTTP
// answers the same 302 as HTTPS. Prints `LISTENING <http port> <https port>`.
import fs from 'node:fs';
import { ulid } from 'ulid';
import { Sealer } from '../../server/at-rest.js';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { certificateDates, saveCertificate } from '../../server/domains/certificate-store.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { onShutdown } from '../../server/process.js';
import { startRedirectListener } from '../../server/redirect/listener.js';

const host = process.env.BENCH_HOST!;
const certificatePem = fs.readFileSync(process.env.BENCH_CERT_FILE!, 'utf8');
const privateKeyPem = fs.readFileSync(process.env.BENCH_KEY_FILE!, 'utf8');
const config = loadConfig(process.env, { enableWorker: false });
const log = createLogger(config.logLevel);
const app = await boot(config, log, { reconcileFallbacks: true });
const { org } = await createOrganization(app, {
  name: 'Bench',
  slug: 'bench',
  planCode: null,
  currency: 'EUR',
  ownerEmail: 'bench@example.com',
});
const dates = certificateDates(certificatePem);
const [domain] = await app
  .db('domains')
  .insert({
    ulid: ulid(),
    org_id: org.id,
    host,
    type: 'custom',
    status: 'active',
    ssl_status: 'active',
    ssl_expires_at: dates.notAfter,
    verified_at: new Date(),
    settings: JSON.stringify({ https_redirect: false }),
  })
  .returning('id');
await saveCertificate(app.db, new Sealer(app.secretKey), domain.id, { certificatePem, privateKeyPem, ...dates });
for (const slug of ['warm', 'go']) {
  await app.db('qr_codes').insert({
    ulid: ulid(),
    org_id: org.id,
    domain_id: domain.id,
    slug: `bench/${slug}`,
    destination: JSON.stringify('https://example.com/landing?from=qr'),
  });
}
const rd = await startRedirectListener(app, 0, '127.0.0.1', {
  tlsPort: 0,
  defaultCertificate: { certificatePem, privateKeyPem },
});
process.stdout.write(`LISTENING ${rd.port} ${rd.tlsPort}\n`);
onShutdown(log, async () => {
  await rd.close();
  await app.close();
});
