// The events the services write into the outbox, each in the transaction of its change and once:
// bulk imports, domain verification, and the two crossings admission announces.
import { expect } from 'chai';
import { executeImport } from '../../server/bulk-imports/job.js';
import { Sealer } from '../../server/at-rest.js';
import { certificateDates } from '../../server/domains/certificate-store.js';
import type { DomainRow } from '../../server/domains/domain-row.js';
import { certificateFailed, certificateIssued, domainUnverified } from '../../server/domains/lifecycle.js';
import { verificationToken } from '../../server/domains/service.js';
import { setLowBalanceThreshold } from '../../server/wallet/service.js';
import { drainEndpoint } from '../../server/webhooks/delivery.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { createTestCa } from '../helpers/test-certs.js';
import { fallbackDomain } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { verified, WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('webhook events of the services', () => {
  let svc: TestService;
  let dns: TestDnsServer;
  let receiver: WebhookReceiver;
  let domainUlid: string;

  before(async () => {
    dns = await startDnsServer();
    receiver = await WebhookReceiver.start();
    svc = await startTestService({
      config: { dnsResolvers: [dns.address], webhookAllowedTargets: ['127.0.0.1/32'], platformRateLimitPerMin: 10_000 },
    });
    domainUlid = (await fallbackDomain(svc.app)).ulid;
  });
  after(async () => {
    await svc.close();
    await receiver.close();
    await dns.close();
  });

  async function subscribe(o: TestOrg, events: string[]): Promise<string> {
    const res = await svc.post('/v1/webhooks', o.token, { url: receiver.url(), events });
    expect(res.status, res.text).to.equal(201);
    return res.body.secret;
  }

  async function events(o: TestOrg, type: string): Promise<{ id: number; data: any }[]> {
    return svc.app.db('webhook_events').where({ org_id: o.org.id, type }).orderBy('id').select('id', 'data');
  }

  it('announces a finished bulk import as bulk_import.completed, and one where no row could be created as bulk_import.failed', async () => {
    const o = await svc.createOrg();
    await subscribe(o, ['bulk_import.completed', 'bulk_import.failed']);
    const stage = async (slugs: string[]) => {
      const rows = slugs.map((slug) => ({ slug, destination: `https://example.com/${slug}` }));
      const res = await svc.post('/v1/qr-codes/bulk', o.token, { rows, defaults: { domain_ulid: domainUlid } });
      expect(res.status, res.text).to.equal(201);
      const ulid = res.body.data.ulid;
      const ok = await svc.post(`/v1/qr-codes/bulk/${ulid}/confirm`, o.token, {
        confirm_token: res.body.meta.confirm_token,
      });
      expect(ok.status).to.equal(202);
      return (await svc.app.db('bulk_imports').where({ ulid }).first('id', 'ulid')) as { id: number; ulid: string };
    };
    const good = await stage(['b1', 'b2']);
    await executeImport(svc.app, good.id);
    const doomed = await stage(['b3']);
    // Taken after staging: the import's only row fails.
    expect(
      (
        await svc.post('/v1/qr-codes', o.token, {
          slug: 'b3',
          destination: 'https://example.com/',
          domain_ulid: domainUlid,
        })
      ).status,
    ).to.equal(201);
    await executeImport(svc.app, doomed.id);
    await executeImport(svc.app, doomed.id);

    const completed = await events(o, 'bulk_import.completed');
    expect(completed).to.have.length(1);
    expect(completed[0].data).to.include({ ulid: good.ulid, status: 'completed', success_count: 2 });
    const failed = await events(o, 'bulk_import.failed');
    expect(failed).to.have.length(1);
    expect(failed[0].data).to.include({ ulid: doomed.ulid, status: 'failed', failed_count: 1 });
  });

  it('announces a verified custom domain as domain.verified', async () => {
    const o = await svc.createOrg();
    await subscribe(o, ['domain.verified']);
    const host = `hooks-${Math.random().toString(36).slice(2, 8)}.example.test`;
    const created = await svc.post('/v1/domains', o.token, { host });
    dns.setTxt(`_qr-verify.${host}`, [verificationToken(svc.app, o.org, host)]);
    const res = await svc.patch(`/v1/domains/${created.body.data.ulid}`, o.token, { verify: true });
    expect(res.body.data.status).to.equal('active');
    const [event] = await events(o, 'domain.verified');
    expect(event.data).to.include({ ulid: created.body.data.ulid, host, status: 'active' });
    // Verifying an active domain again is no transition.
    await svc.patch(`/v1/domains/${created.body.data.ulid}`, o.token, { verify: true });
    expect(await events(o, 'domain.verified')).to.have.length(1);
  });

  it('announces certificates issued and failed (once per run of failures) and a domain becoming unverified', async () => {
    const o = await svc.createOrg();
    await subscribe(o, ['domain.certificate_issued', 'domain.certificate_failed', 'domain.unverified']);
    const host = `certs-${Math.random().toString(36).slice(2, 8)}.example.test`;
    const created = await svc.post('/v1/domains', o.token, { host });
    dns.setTxt(`_qr-verify.${host}`, [verificationToken(svc.app, o.org, host)]);
    await svc.patch(`/v1/domains/${created.body.data.ulid}`, o.token, { verify: true });
    const row = async () => (await svc.app.db('domains').where({ ulid: created.body.data.ulid }).first()) as DomainRow;
    const now = svc.clock.now();
    const retry = new Date(now.getTime() + 60_000);
    await certificateFailed(svc.app, await row(), 'CA said no', now, retry);
    await certificateFailed(svc.app, await row(), 'CA said no again', now, retry);
    const failed = await events(o, 'domain.certificate_failed');
    expect(failed).to.have.length(1);
    expect(failed[0].data).to.include({ host, ssl_status: 'failed', ssl_error: 'CA said no' });

    const leaf = await (await createTestCa()).issue({ dns: [host] });
    const dates = certificateDates(leaf.certPem);
    const cert = { certificatePem: leaf.certPem, privateKeyPem: leaf.keyPem, ...dates };
    await certificateIssued(svc.app, new Sealer(svc.app.secretKey), await row(), cert, now);
    const [issued] = await events(o, 'domain.certificate_issued');
    expect(issued.data).to.include({ host, ssl_status: 'active', ssl_expires_at: dates.notAfter.toISOString() });

    await svc.app.db.transaction((trx) =>
      row().then((r) => domainUnverified(svc.app, trx, r, now, 'TXT record missing')),
    );
    const [unverified] = await events(o, 'domain.unverified');
    expect(unverified.data).to.include({ host, status: 'unverified' });
  });

  it('announces the wallet falling below its threshold once, even for concurrent calls, rendered like the API', async () => {
    const o = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 105 });
    const secret = await subscribe(o, ['wallet.low_balance']);
    await setLowBalanceThreshold(svc.app, o.org, 100);
    const answers = await Promise.all(Array.from({ length: 10 }, () => svc.get('/v1/organization', o.token)));
    expect(answers.map((a) => a.status)).to.deep.equal(Array(10).fill(200));
    // 104 after the metered POST that subscribed; the batch that crosses 100 may hold several calls.
    const low = await events(o, 'wallet.low_balance');
    expect(low).to.have.length(1);
    expect(low[0].data).to.include({ currency: 'EUR', low_balance_threshold_minor: 100 });
    const balance = low[0].data.balance_minor as number;
    expect(balance).to.be.within(94, 99);
    await Promise.all(Array.from({ length: 5 }, () => svc.get('/v1/organization', o.token)));
    expect(await events(o, 'wallet.low_balance')).to.have.length(1);

    const [endpointId] = await svc.app.db('webhook_deliveries').where({ event_id: low[0].id }).pluck('endpoint_id');
    receiver.received.length = 0;
    expect([...(await drainEndpoint(svc.app, endpointId)).values()]).to.deep.equal(['succeeded']);
    const [got] = await receiver.waitFor(1);
    expect(verified(secret, got)).to.deep.include({
      type: 'wallet.low_balance',
      data: { balance: `0.${balance}`, low_balance_threshold: '1.00', currency: 'EUR' },
    });
  });

  it('announces the month’s included calls running out once, as usage.included_calls_exhausted', async () => {
    const o = await svc.createOrg({ plan: 'business_monthly' });
    await subscribe(o, ['usage.included_calls_exhausted']);
    const month = svc.clock.now().toISOString().slice(0, 7);
    await svc.app.db('api_usage_months').where({ org_id: o.org.id }).update({ calls: 9_995 });
    await Promise.all(Array.from({ length: 10 }, () => svc.get('/v1/organization', o.token)));
    const exhausted = await events(o, 'usage.included_calls_exhausted');
    expect(exhausted).to.have.length(1);
    expect(exhausted[0].data).to.include({ month, calls_included_month: 10_000 });
    expect(exhausted[0].data.calls_used_month).to.be.within(10_000, 10_005);
    await svc.get('/v1/organization', o.token);
    expect(await events(o, 'usage.included_calls_exhausted')).to.have.length(1);
  });
});
