import { expect } from 'chai';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('metering and the wallet under concurrency', () => {
  let svc: TestService;
  before(async () => {
    // A high platform ceiling so that 200 concurrent calls are all admitted by the window.
    svc = await startTestService({ config: { platformRateLimitPerMin: 10_000 } });
  });
  after(() => svc.close());
  afterEach(() => svc.clock.reset());

  async function ledger(orgId: number) {
    const rows = await svc.app.db('wallet_transactions').where({ org_id: orgId });
    const wallet = await svc.app.db('wallets').where({ org_id: orgId }).first();
    return { rows, balance: Number(wallet.balance_minor), sum: rows.reduce((s, r) => s + Number(r.amount_minor), 0) };
  }

  async function burst(token: string, n: number, path = '/v1/organization') {
    const results = await Promise.all(Array.from({ length: n }, () => svc.get(path, token)));
    const count = (s: number) => results.filter((r) => r.status === s).length;
    return {
      ok: count(200),
      paymentRequired: count(402),
      other: results.filter((r) => ![200, 402].includes(r.status)),
    };
  }

  it('debits exactly the overage of 200 concurrent calls and answers 402 once the wallet runs out', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 150 });
    svc.clock.set('2026-11-22T09:30:00.000Z');
    const r = await burst(token, 200);
    expect(r.other).to.deep.equal([]);
    expect(r.ok).to.equal(150);
    expect(r.paymentRequired).to.equal(50);

    const status = await svc.get('/v1/status', token);
    expect(status.body.api.calls_used_month).to.equal(150);
    expect(status.body.api.calls_included_month).to.equal(0);

    const l = await ledger(org.id);
    expect(l.balance).to.equal(0);
    expect(l.sum).to.equal(0); // +150 top-up, -150 usage
    const debits = l.rows.filter((t) => t.type === 'debit');
    expect(debits.reduce((s, t) => s + Number(t.amount_minor), 0)).to.equal(-150);
    // All the debits of one minute are aggregated into one ledger row.
    expect(debits).to.have.length(1);
    expect(debits[0].reference_type).to.equal('api_usage');
    expect(Number(debits[0].balance_after_minor)).to.equal(0);

    const refused = await svc.get('/v1/organization', token);
    expect(refused.status).to.equal(402);
    expect(refused.body).to.deep.equal({
      message:
        'The monthly included API calls are used up and the wallet balance cannot cover this call. Top up the wallet in the web UI.',
      code: 'insufficient_funds',
    });
    expect(refused.headers.get('x-ratelimit-limit')).to.equal('10000');
  });

  it('bills only calls beyond the included calls of the month', async () => {
    const { org, token } = await svc.createOrg({ plan: 'business_monthly', balanceMinor: 100 });
    svc.clock.set('2026-11-22T09:31:00.000Z');
    await svc.app.db('api_usage_months').insert({ org_id: org.id, month: '2026-11-01', calls: 9_950 });
    const r = await burst(token, 200);
    expect(r.other).to.deep.equal([]);
    expect(r.ok).to.equal(150); // 50 included + 100 paid
    expect(r.paymentRequired).to.equal(50);
    const usage = await svc.app.db('api_usage_months').where({ org_id: org.id, month: '2026-11-01' }).first();
    expect(Number(usage.calls)).to.equal(10_100);
    const l = await ledger(org.id);
    expect(l.balance).to.equal(0);
    expect(l.sum).to.equal(0);
  });

  it('starts counting again in a new calendar month (UTC)', async () => {
    const { token } = await svc.createOrg({ plan: 'business_monthly' });
    svc.clock.set('2026-11-30T23:59:59.000Z');
    await burst(token, 5);
    expect((await svc.get('/v1/status', token)).body.api.calls_used_month).to.equal(5);
    svc.clock.set('2026-12-01T00:00:00.000Z');
    expect((await svc.get('/v1/status', token)).body.api.calls_used_month).to.equal(0);
  });

  it('counts nothing for non-billable endpoints: status, wallet and tokens', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly' });
    svc.clock.set('2026-11-22T09:40:00.000Z');
    for (const path of ['/v1/status', '/v1/wallet', '/v1/tokens', '/v1/tokens/abilities']) {
      const r = await burst(token, 10, path);
      expect(r.ok, path).to.equal(10);
    }
    expect(await svc.app.db('api_usage_months').where({ org_id: org.id })).to.deep.equal([]);
    expect((await ledger(org.id)).rows).to.deep.equal([]);
  });

  it('never bills an enterprise organization (unlimited included calls)', async () => {
    const { org, token } = await svc.createOrg({ plan: 'enterprise_monthly' });
    const r = await burst(token, 50);
    expect(r.ok).to.equal(50);
    expect((await svc.get('/v1/status', token)).body.api).to.deep.include({
      calls_used_month: 50,
      calls_included_month: -1,
    });
    expect((await ledger(org.id)).rows).to.deep.equal([]);
  });
});
