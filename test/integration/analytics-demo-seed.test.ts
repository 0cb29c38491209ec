import { expect } from 'chai';
import { seedDemo, type SeedDemoResult } from '../../server/analytics/demo-seed.js';
import { startTestService, type TestService } from '../helpers/harness.js';

describe('seedDemo (qrctl seed-demo)', () => {
  let svc: TestService;
  let demo: SeedDemoResult;
  before(async () => {
    svc = await startTestService();
    svc.clock.set('2026-03-15T12:00:00.000Z');
  });
  after(() => svc?.close());

  it('creates an organization with brands and codes and writes exactly N scans over the last 90 days, reporting progress', async () => {
    const progress: [number, number][] = [];
    demo = await seedDemo(svc.app, {
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

  it('gives the same figures from the rollup as from the raw events, per day, country, brand and code', async () => {
    const raw = async <T>(select: string, group: string): Promise<T[]> => {
      const rs = await svc.app.ch.client.query({
        query: `SELECT ${select}, toUInt32(count()) AS scans, toUInt32(uniqCombined(12)(visitor_hash)) AS uniques,
                       toUInt32(uniqExact(visitor_hash)) AS exact
                  FROM ${svc.app.ch.database}.scan_events
                 WHERE org_id = {org:UInt64} AND is_bot = 0 GROUP BY ${group} ORDER BY ${group}`,
        query_params: { org: demo.org.id },
        format: 'JSONEachRow',
      });
      return rs.json<T>();
    };
    const org = (await svc.get('/v1/analytics?range=90&dimension=country', demo.token)).body.data;
    const [all] = await raw<{ scans: number; uniques: number; exact: number }>('1 AS one', 'one');
    // Merged states give exactly what the estimator gives over the raw rows, and it stays close to exact.
    expect(org.totals).to.include({ scans: all.scans, uniques: all.uniques });
    expect(Math.abs(all.uniques / all.exact - 1)).to.be.below(0.03);

    const days = await raw<{ day: string; scans: number }>('toString(toDate(scanned_at)) AS day', 'day');
    const byDay = new Map(days.map((d) => [d.day, d.scans]));
    for (const d of org.time_series) expect(d.scans, d.date).to.equal(byDay.get(d.date) ?? 0);

    const countries = await raw<{ country: string; scans: number; uniques: number }>(
      'toString(country) AS country',
      'country',
    );
    const rollupCountries = org.dimension_breakdown.map((b: { key: string; scans: number; uniques: number }) => [
      b.key,
      b.scans,
      b.uniques,
    ]);
    // Scans are exact. Distinct visitors merged from daily sketches may differ from one sketch over
    // the raw rows by a visitor or two in a few hundred (the estimator's rounding), never more.
    const near = (got: [string, number, number][], want: [string, number, number][]) => {
      expect(got.map(([k, n]) => [k, n])).to.deep.equal(want.map(([k, n]) => [k, n]));
      got.forEach(([k, , u], i) => expect(Math.abs(u - want[i][2]), k).to.be.at.most(Math.max(2, want[i][2] * 0.02)));
    };
    near(
      rollupCountries.sort(),
      countries.map((c): [string, number, number] => [c.country, c.scans, c.uniques]).sort(),
    );

    const brands = await raw<{ brand_id: number; scans: number; uniques: number }>(
      'toUInt32(brand_id) AS brand_id',
      'brand_id',
    );
    const brandUlid = new Map(demo.brands.map((b) => [b.id, b.ulid]));
    near(
      org.child_breakdown
        .map((c: { key: string; scans: number; uniques: number }) => [c.key, c.scans, c.uniques])
        .sort(),
      brands.map((b): [string, number, number] => [brandUlid.get(b.brand_id) ?? '', b.scans, b.uniques]).sort(),
    );

    const brand = demo.brands[1];
    const brandView = (await svc.get(`/v1/analytics?range=90&brand_ulid=${brand.ulid}`, demo.token)).body.data;
    const codes = await raw<{ code_id: number; brand_id: number; scans: number; uniques: number }>(
      'toUInt32(code_id) AS code_id, toUInt32(brand_id) AS brand_id',
      'code_id, brand_id',
    );
    const codeUlid = new Map(demo.codes.map((c) => [c.id, c.ulid]));
    const inBrand = codes.filter((c) => c.brand_id === brand.id);
    near(
      brandView.child_breakdown
        .map((c: { key: string; scans: number; uniques: number }) => [c.key, c.scans, c.uniques])
        .sort(),
      inBrand.map((c): [string, number, number] => [codeUlid.get(c.code_id)!, c.scans, c.uniques]).sort(),
    );
    expect(brandView.totals.scans).to.equal(inBrand.reduce((n, c) => n + c.scans, 0));
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
