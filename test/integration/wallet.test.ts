import { expect } from 'chai';
import { topUp } from '../../server/wallet/service.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('GET /v1/wallet', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 10_000 } });
  });
  after(() => svc.close());

  it('renders money with the currency exponent: EUR, JPY and KWD', async () => {
    for (const [currency, minor, balance] of [
      ['EUR', 1234, '12.34'],
      ['JPY', 1234, '1234'],
      ['KWD', 1234, '1.234'],
      ['EUR', 5, '0.05'],
    ] as const) {
      const { token } = await svc.createOrg({ currency, balanceMinor: minor });
      const res = await svc.get('/v1/wallet', token);
      expect(res.status).to.equal(200);
      expect(res.body.data.balance, currency).to.equal(balance);
      expect(res.body.data.currency).to.equal(currency);
      expect(res.body.data.low_balance_threshold).to.equal(null);
      expect(res.body.data.transactions.data[0]).to.include({
        type: 'credit',
        amount: balance,
        balance_after: balance,
        reference_type: 'top_up',
      });
    }
  });

  it('pages the ledger newest first with meta', async () => {
    const { org, token } = await svc.createOrg({ currency: 'EUR' });
    for (let i = 1; i <= 30; i++) {
      svc.clock.set(new Date(Date.UTC(2026, 10, 1, 0, i)));
      await topUp(svc.app, org, i * 100);
    }
    svc.clock.reset();
    const first = await svc.get('/v1/wallet', token);
    expect(first.body.data.transactions.meta).to.deep.equal({ current_page: 1, last_page: 2, per_page: 25, total: 30 });
    expect(first.body.data.transactions.data).to.have.length(25);
    expect(first.body.data.transactions.data[0].amount).to.equal('30.00');
    expect(first.body.data.transactions.data[0].balance_after).to.equal('465.00');
    const second = await svc.get('/v1/wallet?page=2&per_page=25', token);
    expect(second.body.data.transactions.data.map((t: { amount: string }) => t.amount)).to.deep.equal([
      '5.00',
      '4.00',
      '3.00',
      '2.00',
      '1.00',
    ]);
    const small = await svc.get('/v1/wallet?per_page=1&page=30', token);
    expect(small.body.data.transactions.meta).to.deep.equal({
      current_page: 30,
      last_page: 30,
      per_page: 1,
      total: 30,
    });
    expect(small.body.data.transactions.data[0].amount).to.equal('1.00');
    const beyond = await svc.get('/v1/wallet?page=99', token);
    expect(beyond.body.data.transactions.data).to.deep.equal([]);
  });

  for (const [query, field] of [
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=abc', 'per_page'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=1.5', 'page'],
    ['extra=1', 'extra'],
  ]) {
    it(`answers 422 for ${query}`, async () => {
      const { token } = await svc.createOrg();
      const res = await svc.get(`/v1/wallet?${query}`, token);
      expect(res.status).to.equal(422);
      expect(res.body.code).to.equal('validation_failed');
      expect(res.body.errors).to.have.property(field);
    });
  }

  it('shows only the caller’s organization’s wallet', async () => {
    const a = await svc.createOrg({ balanceMinor: 700 });
    const b = await svc.createOrg({ balanceMinor: 300 });
    expect((await svc.get('/v1/wallet', a.token)).body.data.balance).to.equal('7.00');
    expect((await svc.get('/v1/wallet', b.token)).body.data.balance).to.equal('3.00');
    expect((await svc.get('/v1/wallet', b.token)).body.data.transactions.meta.total).to.equal(1);
  });
});
