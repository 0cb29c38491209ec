import { expect } from 'chai';
import { ulid } from 'ulid';
import { insertScanEvents, type ScanEvent } from '../../server/analytics/synthetic-scans.js';
import { clickHouseTime } from '../../server/analytics/scan-event.js';
import { insertText } from '../../server/stores/clickhouse.js';
import { fallbackDomain, makeBrand, makeCode, scanRow } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { toolOk } from './mcp-helpers.js';

// The breakdowns the daily rollup does not hold (operating system, browser, landing-page actions)
// and the hourly series of the last 48 hours. "Now" is 2026-03-15T12:30Z: the 48 hours run from
// 2026-03-13T13:00Z to the current hour, 2026-03-15T12:00Z.
//
//   code  brand  time (UTC)                 os       browser  visitor
//   C1    B1     2026-03-13T12:59:59.999Z   iOS      Safari   v1   (range 7, before the 48 hours)
//   C1    B1     2026-03-13T13:00:00.000Z   Windows  Edge     v3   (the first of the 48 hours)
//   C1    B1     2026-03-15T11:59:59.999Z   Android  Chrome   v2
//   C1    B1     2026-03-15T12:10:00.000Z   iOS      Safari   v1   (the current hour)
//   C1    B1     2026-03-15T12:05:00.000Z   -        -        v9   (bot: left out)
//   C2    -      2026-03-14T08:30:00.000Z   iOS      Chrome   v4
//   other organization: 2026-03-15T12:00Z iOS Safari, and a link action (must never show up)
// Actions on C1's landing page: vcard twice (v1), link once (v2), a consent answer (not an action).
const NOW = '2026-03-15T12:30:00.000Z';

describe('Analytics: os, browser and action breakdowns, and the last 48 hours hour by hour', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let brand: { id: number; ulid: string };
  let c1: { id: number; ulid: string };
  let c2: { id: number; ulid: string };

  const scan = (org: TestOrg, code: { id: number }, brandId: number, iso: string, f: Partial<ScanEvent>) =>
    scanRow(Date.parse(iso), { org_id: org.org.id, brand_id: brandId, code_id: code.id, ...f });
  const action = (org: TestOrg, code: { id: number }, brandId: number, iso: string, name: string, visitor: string) =>
    JSON.stringify({
      action_id: ulid(),
      scanned_at: clickHouseTime(Date.parse(iso)),
      org_id: org.org.id,
      brand_id: brandId,
      domain_id: 0,
      code_id: code.id,
      action: name,
      target: 0,
      visitor_hash: visitor,
      is_bot: 0,
    });

  before(async () => {
    svc = await startTestService();
    svc.clock.set(NOW);
    a = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'acme' });
    b = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'globex' });
    const domain = await fallbackDomain(svc.app);
    brand = await makeBrand(svc.app, a.org, { name: 'Coffee', slug: 'coffee' });
    c1 = await makeCode(svc.app, a.org, { slug: 'menu', name: 'Menu', brand, domain });
    c2 = await makeCode(svc.app, a.org, { slug: 'card', name: 'Card', domain });
    const other = await makeCode(svc.app, b.org, { slug: 'menu', name: 'Menu', domain });
    const B = brand.id;
    await insertScanEvents(svc.app.ch, [
      scan(a, c1, B, '2026-03-13T12:59:59.999Z', { os: 'iOS', browser: 'Safari', visitor_hash: '1' }),
      scan(a, c1, B, '2026-03-13T13:00:00.000Z', { os: 'Windows', browser: 'Edge', visitor_hash: '3' }),
      scan(a, c1, B, '2026-03-15T11:59:59.999Z', { os: 'Android', browser: 'Chrome', visitor_hash: '2' }),
      scan(a, c1, B, '2026-03-15T12:10:00.000Z', { os: 'iOS', browser: 'Safari', visitor_hash: '1' }),
      scan(a, c1, B, '2026-03-15T12:05:00.000Z', { device_type: 'bot', is_bot: 1, visitor_hash: '9' }),
      scan(a, c2, 0, '2026-03-14T08:30:00.000Z', { os: 'iOS', browser: 'Chrome', visitor_hash: '4' }),
      scan(b, other, 0, '2026-03-15T12:00:00.000Z', { os: 'iOS', browser: 'Safari', visitor_hash: '1' }),
    ]);
    await insertText(svc.app.ch.client, {
      table: `${svc.app.ch.database}.scan_actions`,
      format: 'JSONEachRow',
      dedupToken: ulid(),
      body: [
        action(a, c1, B, '2026-03-14T10:00:00.000Z', 'vcard', '1'),
        action(a, c1, B, '2026-03-15T12:11:00.000Z', 'vcard', '1'),
        action(a, c1, B, '2026-03-15T12:00:00.000Z', 'link', '2'),
        action(a, c1, B, '2026-03-15T12:10:30.000Z', 'consent_granted', '1'),
        action(b, other, 0, '2026-03-15T12:00:00.000Z', 'link', '1'),
      ].join('\n'),
    });
  });
  after(() => svc?.close());

  const get = async (token: string, q: string) => {
    const res = await svc.get(`/v1/analytics?range=7&${q}`, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };

  it('breaks down by operating system and by browser from the raw scans, summing to the totals', async () => {
    const os = await get(a.token, 'dimension=os');
    expect(os.dimension_label).to.equal('Operating system');
    expect(os.totals.scans).to.equal(5);
    expect(os.dimension_breakdown).to.deep.equal([
      { key: 'iOS', label: 'iOS', scans: 3, uniques: 2 },
      { key: 'Android', label: 'Android', scans: 1, uniques: 1 },
      { key: 'Windows', label: 'Windows', scans: 1, uniques: 1 },
    ]);
    const browser = await get(a.token, 'dimension=browser');
    expect(browser.dimension_label).to.equal('Browser');
    expect(browser.dimension_breakdown).to.deep.equal([
      { key: 'Chrome', label: 'Chrome', scans: 2, uniques: 2 },
      { key: 'Safari', label: 'Safari', scans: 2, uniques: 1 },
      { key: 'Edge', label: 'Edge', scans: 1, uniques: 1 },
    ]);
    // A brand's and a code's scope, and the bot counted only when asked for ("Unknown" os).
    const brandOs = await get(a.token, `dimension=os&brand_ulid=${brand.ulid}`);
    expect(brandOs.dimension_breakdown.map((x: { scans: number }) => x.scans)).to.deep.equal([2, 1, 1]);
    const codeOs = await get(a.token, `dimension=os&code_ulid=${c2.ulid}`);
    expect(codeOs.dimension_breakdown).to.deep.equal([{ key: 'iOS', label: 'iOS', scans: 1, uniques: 1 }]);
    const bots = await get(a.token, 'dimension=os&include_bots=true');
    expect(bots.dimension_breakdown).to.deep.include({ key: '', label: 'Unknown', scans: 1, uniques: 1 });
  });

  it('breaks down by landing-page action, consent answers and other organizations left out', async () => {
    const d = await get(a.token, 'dimension=action');
    expect(d.dimension_label).to.equal('Landing-page action');
    expect(d.dimension_breakdown).to.deep.equal([
      { key: 'vcard', label: 'Contact download', scans: 2, uniques: 1 },
      { key: 'link', label: 'Link', scans: 1, uniques: 1 },
    ]);
    const code = (await svc.get(`/v1/analytics/qr-codes/${c1.ulid}?range=7&dimension=action`, a.token)).body.data;
    expect(code.dimension_breakdown).to.deep.equal(d.dimension_breakdown);
    expect((await get(a.token, `dimension=action&code_ulid=${c2.ulid}`)).dimension_breakdown).to.deep.equal([]);
  });

  it('exports the raw dimensions per day as csv_rows', async () => {
    const res = await svc.get('/v1/analytics/export?range=7&dimension=browser', a.token);
    expect(res.status).to.equal(200);
    expect(res.body.data.csv_rows).to.deep.equal([
      { date: '2026-03-13', browser: 'Edge', scans: 1 },
      { date: '2026-03-13', browser: 'Safari', scans: 1 },
      { date: '2026-03-14', browser: 'Chrome', scans: 1 },
      { date: '2026-03-15', browser: 'Chrome', scans: 1 },
      { date: '2026-03-15', browser: 'Safari', scans: 1 },
    ]);
  });

  it('adds every one of the last 48 UTC hours with hourly=true, the current hour last, zeros included', async () => {
    expect(await get(a.token, 'dimension=country')).not.to.have.property('hourly_series');
    const series: { hour: string; scans: number }[] = (await get(a.token, 'hourly=true')).hourly_series;
    expect(series).to.have.length(48);
    expect(series[0].hour).to.equal('2026-03-13T13:00:00.000Z');
    expect(series[47].hour).to.equal('2026-03-15T12:00:00.000Z');
    const nonZero = Object.fromEntries(series.filter((h) => h.scans).map((h) => [h.hour, h.scans]));
    expect(nonZero).to.deep.equal({
      '2026-03-13T13:00:00.000Z': 1,
      '2026-03-14T08:00:00.000Z': 1,
      '2026-03-15T11:00:00.000Z': 1,
      '2026-03-15T12:00:00.000Z': 1,
    });
    const sum = (d: { hourly_series: { scans: number }[] }) => d.hourly_series.reduce((n, h) => n + h.scans, 0);
    expect(sum(await get(a.token, `hourly=true&brand_ulid=${brand.ulid}`))).to.equal(3);
    expect(sum(await get(a.token, `hourly=true&code_ulid=${c2.ulid}`))).to.equal(1);
    expect(sum(await get(a.token, 'hourly=true&include_bots=true'))).to.equal(5);
    expect(sum(await get(b.token, 'hourly=true'))).to.equal(1);
    // The tool call takes the same input and answers the same.
    const mcp = await toolOk(svc, a.token, 'analytics_read', { range: 7, hourly: true, dimension: 'os' });
    expect(mcp.data.hourly_series).to.deep.equal(series);
  });

  it('answers 422 for hourly that is not a boolean and for an unknown dimension', async () => {
    expect((await svc.get('/v1/analytics?hourly=sometimes', a.token)).status).to.equal(422);
    expect((await svc.get('/v1/analytics?dimension=platform', a.token)).status).to.equal(422);
  });
});
