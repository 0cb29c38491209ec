// The organization's Analytics page in Debian's Chromium: every number it shows (totals, days,
// the last 48 hours, countries with the map, operating systems, browsers, devices, landing-page
// actions) is the API's answer for the same range and scope; the range and brand controls change
// the address, so reload, back and forward keep them; the map shades the most scanned country
// darkest and has a text summary; axe-core finds no violation of any impact; a screenshot goes
// under the test output for docs/dashboard.md.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ulid } from 'ulid';
import { clickHouseTime } from '../../server/analytics/scan-event.js';
import { insertScanEvents } from '../../server/analytics/synthetic-scans.js';
import { insertText } from '../../server/stores/clickhouse.js';
import { scanRow } from '../helpers/fixtures.js';
import type { TestService } from '../helpers/harness.js';
import { axeViolations, heading, pageChecks, signedInDashboard } from './browser.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Who scanned: country, os, browser, device; visitors repeat so uniques differ from scans. */
const VISITS = [
  { country: 'DE', os: 'iOS', browser: 'Mobile Safari', device_type: 'mobile' },
  { country: 'DE', os: 'Android', browser: 'Chrome Mobile', device_type: 'mobile' },
  { country: 'US', os: 'iOS', browser: 'Mobile Safari', device_type: 'mobile' },
  { country: 'FR', os: 'Windows', browser: 'Edge', device_type: 'desktop' },
  { country: 'JP', os: 'Android', browser: 'Samsung Internet', device_type: 'tablet' },
  { country: '', os: 'Mac OS', browser: 'Firefox', device_type: 'desktop' },
];

describe('dashboard Analytics page in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let brandUlid: string;
  const { look } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    // One instant for the page's calls and the test's: the last 48 hours are the same hours.
    const now = Math.floor(Date.now() / HOUR) * HOUR + 30 * 60_000;
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard({ at: new Date(now) }));
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    brandUlid = (await svc.post('/v1/brands', token, { name: 'Coffee', slug: 'coffee' })).body.data.ulid;
    const menu = (
      await svc.post('/v1/qr-codes', token, {
        slug: 'menu',
        name: 'Spring menu',
        destination: 'https://acme.example/menu',
        domain_ulid: domain,
        brand_ulid: brandUlid,
      })
    ).body.data.ulid;
    const card = (
      await svc.post('/v1/qr-codes', token, {
        slug: 'card',
        name: 'Business card',
        type: 'vcard',
        destination: { name: 'Ada Lovelace' },
        domain_ulid: domain,
      })
    ).body.data.ulid;
    const ids = async (u: string) => svc.app.db('qr_codes').where({ ulid: u }).first('id', 'org_id', 'brand_id');
    const m = await ids(menu);
    const c = await ids(card);
    const events = [];
    // 40 days of scans (outside 30 and 7 days too), denser lately, and many in the last 48 hours.
    for (let i = 0; i < 160; i++) {
      const ago = i < 60 ? i * 47 * 60_000 : (i - 60) * 9 * HOUR;
      const v = VISITS[i % VISITS.length];
      const row = i % 3 === 0 ? c : m;
      events.push(
        scanRow(now - ago, {
          org_id: Number(row.org_id),
          brand_id: Number(row.brand_id ?? 0),
          code_id: Number(row.id),
          visitor_hash: String((i % VISITS.length) * 100 + (i % (2 + (i % VISITS.length)))),
          ...v,
        }),
      );
    }
    // A bot, left out everywhere.
    events.push(
      scanRow(now - HOUR, {
        org_id: Number(m.org_id),
        brand_id: Number(m.brand_id),
        code_id: Number(m.id),
        country: 'DE',
        device_type: 'bot',
        is_bot: 1,
        visitor_hash: '99',
      }),
    );
    await insertScanEvents(svc.app.ch, events);
    const action = (ago: number, name: string, visitor: string) =>
      JSON.stringify({
        action_id: ulid(),
        scanned_at: clickHouseTime(now - ago),
        org_id: Number(c.org_id),
        brand_id: 0,
        domain_id: 0,
        code_id: Number(c.id),
        action: name,
        target: 0,
        visitor_hash: visitor,
        is_bot: 0,
      });
    await insertText(svc.app.ch.client, {
      table: `${svc.app.ch.database}.scan_actions`,
      format: 'JSONEachRow',
      dedupToken: ulid(),
      body: [action(HOUR, 'vcard', '1'), action(2 * DAY, 'vcard', '2'), action(3 * HOUR, 'vcard', '1')].join('\n'),
    });
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  const analytics = (p = '') => `${svc.url}/app/o/${orgUlid}/analytics${p}`;

  /** The rows of a table of the page, cell by cell (hidden ones too: the numbers behind a chart). */
  const rows = (testId: string) =>
    page
      .getByTestId(testId)
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  const n = (x: number) => x.toLocaleString('en-US');

  interface Breakdown {
    label: string;
    scans: number;
    uniques: number;
  }
  const api = async (q: string) => {
    const res = await svc.get(`/v1/analytics?${q}`, token);
    expect(res.status).to.equal(200);
    return res.body.data;
  };

  /** Waits for the page to show the scope's answer, then compares every number with the API's. */
  async function sameNumbersAsTheApi(range: number, brand?: string) {
    const scope = `range=${range}${brand ? `&brand_ulid=${brand}` : ''}`;
    const main = await api(`${scope}&dimension=country&hourly=true`);
    await page.getByText(`scans, last ${range} days`).waitFor();
    await page
      .getByTestId('total-scans')
      .filter({ hasText: new RegExp(`^${n(main.totals.scans)}$`) })
      .waitFor();
    await page.locator('[aria-busy="false"]').first().waitFor();
    expect(await page.getByTestId('total-uniques').textContent()).to.equal(n(main.totals.uniques));
    expect(await rows('scans-chart-table')).to.deep.equal(
      main.time_series.map((d: { date: string; scans: number }) => [d.date, n(d.scans)]),
    );
    expect(await rows('hourly-chart-table')).to.deep.equal(
      main.hourly_series.map((h: { hour: string; scans: number }) => [
        `${h.hour.slice(0, 10)} ${h.hour.slice(11, 16)}`,
        n(h.scans),
      ]),
    );
    const table = (b: Breakdown[]) => b.map((x) => [x.label, n(x.scans), n(x.uniques)]);
    expect(await rows('breakdown-country')).to.deep.equal(table(main.dimension_breakdown));
    for (const dimension of ['os', 'browser', 'device', 'action']) {
      const d = await api(`${scope}&dimension=${dimension}`);
      const shown = await rows(`breakdown-${dimension}`);
      // No entries: the one row saying so.
      if (!d.dimension_breakdown.length)
        expect(
          shown.map((r) => r.length),
          dimension,
        ).to.deep.equal([1]);
      else expect(shown, dimension).to.deep.equal(table(d.dimension_breakdown));
    }
    return main;
  }

  it('shows the same numbers as the API for the last 30 days, with a heading on every chart', async () => {
    await page.goto(analytics());
    await heading(page, 'Analytics');
    const main = await sameNumbersAsTheApi(30);
    expect(main.totals.scans).to.be.greaterThan(100);
    expect(main.dimension_breakdown.length).to.be.greaterThan(3);
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings).to.deep.equal([
      'Scans per day',
      'The last 48 hours',
      'Scans by country',
      'Operating systems',
      'Browsers',
      'Devices',
      'Landing-page actions',
    ]);
    // The landing page's actions: three contact downloads by two visitors.
    expect(await rows('breakdown-action')).to.deep.equal([['Contact download', '3', '2']]);
  });

  it('draws the world map with the most scanned country darkest, countries without scans grey, and a text summary', async () => {
    const map = page.getByTestId('world-map');
    await map.waitFor();
    const main = await api('range=30&dimension=country');
    const top = main.dimension_breakdown[0];
    expect(top.key).to.equal('DE');
    expect(await map.locator('path[data-country="276"]').getAttribute('class')).to.equal('map-b5');
    expect(await map.locator('path[data-country="076"]').getAttribute('class')).to.equal('map-b0');
    expect(await map.locator('path[data-country="276"] title').textContent()).to.equal(
      `Germany: ${n(top.scans)} scans`,
    );
    const summaryId = await map.getAttribute('aria-labelledby');
    const summary = await page.locator(`#${summaryId}`).textContent();
    expect(summary).to.contain(`most scans from Germany (${n(top.scans)})`);
    const unknown = main.dimension_breakdown.find((b: { key: string }) => b.key === '');
    expect(summary).to.contain(`${n(unknown.scans)} scans from an unknown place`);
    // The boundaries come from the dashboard's own assets, never another host.
    const atlas = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((e) => e.name)
        .filter((u) => u.includes('countries')),
    );
    expect(atlas).to.have.length(1);
    expect(new URL(atlas[0]).origin).to.equal(new URL(svc.url).origin);
    expect(atlas[0]).to.match(/\/app\/assets\/countries-110m-[\w-]+\.json$/);
  });

  it('changes the range in the address: the numbers follow, reload keeps it, back returns to 30 days', async () => {
    await page.getByLabel('Range', { exact: true }).selectOption('7');
    await page.waitForURL(/range=7/);
    await sameNumbersAsTheApi(7);
    await page.reload();
    await heading(page, 'Analytics');
    expect(await page.getByLabel('Range', { exact: true }).inputValue()).to.equal('7');
    await sameNumbersAsTheApi(7);
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('range='));
    expect(await page.getByLabel('Range', { exact: true }).inputValue()).to.equal('30');
    await sameNumbersAsTheApi(30);
  });

  it('narrows to a brand: its own numbers, as the API gives them for brand_ulid', async () => {
    await page.getByLabel('Brand').selectOption({ label: 'Coffee' });
    await page.waitForURL(new RegExp(`brand=${brandUlid}`));
    const brand = await sameNumbersAsTheApi(30, brandUlid);
    const all = await api('range=30');
    expect(brand.totals.scans).to.be.lessThan(all.totals.scans);
    expect(await rows('breakdown-action')).to.have.length(1); // the empty row: the contact card has no brand
  });

  it('has no axe-core violation of any impact, and is pictured for the docs', async () => {
    await page.goto(analytics());
    await heading(page, 'Analytics');
    await page.getByTestId('world-map').waitFor();
    await page.getByTestId('breakdown-action').waitFor();
    await page.getByTestId('hourly-chart').locator('canvas').waitFor();
    expect(await axeViolations(page)).to.deep.equal([]);
    await look(page, 'analytics');
  });
});
