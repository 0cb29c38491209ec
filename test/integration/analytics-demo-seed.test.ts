import { expect } from 'chai';
import { seedDemo } from '../../server/analytics/demo-seed.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('seedDemo (qrctl seed-demo)', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
    svc.clock.set('2026-03-15T12:00:00.000Z');
  });
  after(() => svc?.close());

  it('creates an organization with brands and codes and writes exactly N scans over the last 90 days, reporting progress', async () => {
    const progress: [number, number][] = [];
    const demo = await seedDemo(svc.app, {
      scans: 12_000,
      batchSize: 5_000,
      slug: 'demo-test',
      onProgress: (d, t) => progress.push([d, t]),
    });
    expect(progress).to.deep.equal([
      [5_000, 12_000],
      [10_000, 12_000],
      [12_000, 12_000],
    ]);
    expect(demo.brands).to.have.length(4);
    expect(demo.codes).to.have.length(25);
    const [{ count }] = await svc.app.db('qr_codes').where({ org_id: demo.org.id }).count('* as count');
    expect(Number(count)).to.equal(25);

    const rs = await svc.app.ch.client.query({
      query: `SELECT toUInt32(count()) AS n, toUInt32(countIf(is_bot = 1)) AS bots, min(scanned_at) AS first,
                     max(scanned_at) AS last, toUInt32(uniqExact(code_id)) AS codes, toUInt32(uniqExact(country)) AS countries
                FROM ${svc.app.ch.database}.scan_events WHERE org_id = {org:UInt64}`,
      query_params: { org: demo.org.id },
      format: 'JSONEachRow',
    });
    const [s] = await rs.json<{
      n: number;
      bots: number;
      first: string;
      last: string;
      codes: number;
      countries: number;
    }>();
    expect(s.n).to.equal(12_000);
    expect(s.first >= '2025-12-16 00:00:00.000').to.equal(true);
    expect(s.last <= '2026-03-15 12:00:00.000').to.equal(true);
    expect(s.codes).to.equal(25);
    expect(s.countries).to.be.greaterThan(10);
    // About 2% bots, left out of analytics.
    expect(s.bots).to.be.within(100, 500);

    const res = await svc.get('/v1/analytics?range=90', demo.token);
    expect(res.status).to.equal(200);
    expect(res.body.data.totals.scans).to.equal(12_000 - s.bots);
    expect(res.body.data.child_breakdown.map((c: { label: string }) => c.label).sort()).to.deep.equal([
      'Contoso Books',
      'Fabrikam Travel',
      'No brand',
      'Northwind Coffee',
      'Tailspin Events',
    ]);
  });

  it('writes the same scans for the same seed', async () => {
    const count = async (slug: string) => {
      const demo = await seedDemo(svc.app, { scans: 2_000, slug, seed: 7 });
      const rs = await svc.app.ch.client.query({
        query: `SELECT groupArray(country) AS c FROM (SELECT country FROM ${svc.app.ch.database}.scan_events
                 WHERE org_id = {org:UInt64} ORDER BY scanned_at, scan_id)`,
        query_params: { org: demo.org.id },
        format: 'JSONEachRow',
      });
      return (await rs.json<{ c: string[] }>())[0].c;
    };
    expect(await count('demo-a')).to.deep.equal(await count('demo-b'));
  });
});
