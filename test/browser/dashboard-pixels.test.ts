// Tracking pixels, consent and conversions in the dashboard, in Debian's Chromium: the
// organization's pixel_consent setting, a brand's default pixels and a code's own pixels (each with
// the service's 422 message under the field that caused it), and the conversions of a code and of
// the organization in their analytics tables. axe-core on each page and a screenshot of it
// (docs/pixels.md shows them).
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { insertScanEvents } from '../../server/analytics/synthetic-scans.js';
import { examplePixelId } from '../../server/qr-codes/pixels.js';
import { scanRow } from '../helpers/fixtures.js';
import type { TestService } from '../helpers/harness.js';
import { heading, pageChecks, signedInDashboard } from './browser.js';

describe('tracking pixels, consent and conversions in the dashboard', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  const { look, violations } = pageChecks();
  const org = (p: string) => `${svc.url}/app/o/${orgUlid}${p}`;

  before(async function () {
    this.timeout(600_000);
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard());
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('changes the organization’s pixel consent setting', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
    await heading(page, 'Organization settings');
    expect(await page.getByLabel('Tracking pixel consent').inputValue()).to.equal('required');
    await page.getByLabel('Tracking pixel consent').selectOption('not_required');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved: pixels load at once, without asking.').waitFor();
    expect((await svc.get('/v1/organization', token)).body.data.pixel_consent).to.equal('not_required');
    await page.getByLabel('Tracking pixel consent').selectOption('required');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved: pixels load only after the visitor accepts them.').waitFor();
    expect((await svc.get('/v1/organization', token)).body.data.pixel_consent).to.equal('required');
    await look(page, 'settings');
  });

  it('gives a brand default pixels, showing the service’s message for a bad id', async () => {
    await page.goto(org('/brands'));
    await heading(page, 'Brands');
    await page.getByLabel('Brand name').fill('Acme Roasters');
    await page.getByRole('button', { name: 'Add a pixel' }).click();
    await page.getByLabel('Pixel 1: provider').selectOption('ga4');
    await page.getByLabel('Pixel 1: id').fill('UA-1234');
    await page.getByRole('button', { name: 'Create brand' }).click();
    const id = page.getByLabel('Pixel 1: id');
    await page
      .getByText(/Must be a GA4 measurement id: G- and 4 to 16 capital letters or digits/)
      .first()
      .waitFor();
    expect(await id.getAttribute('aria-invalid')).to.equal('true');
    await look(page, 'brand-pixels');
    await id.fill(examplePixelId('ga4'));
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.getByRole('cell', { name: 'Acme Roasters', exact: true }).waitFor();
    const brands = (await svc.get('/v1/brands', token)).body.data;
    expect(brands.find((b: { name: string }) => b.name === 'Acme Roasters').tracking_pixels).to.deep.equal([
      { provider: 'ga4', id: examplePixelId('ga4') },
    ]);
  });

  it('gives a code its own pixels and conversion tracking in the code form', async () => {
    await page.goto(org('/codes/new'));
    await heading(page, 'New code');
    await page.getByLabel('Name', { exact: true }).fill('Shop poster');
    await page.getByLabel('Slug').fill('shop');
    await page.getByLabel('Destination URL', { exact: true }).fill('https://acme.example/shop');
    await page.getByLabel('Use the brand’s default pixels').uncheck();
    await page.getByRole('button', { name: 'Add a pixel' }).click();
    await page.getByLabel('Pixel 1: provider').selectOption('meta');
    await page.getByLabel('Pixel 1: id').fill('12');
    await page.getByRole('button', { name: 'Add a pixel' }).click();
    await page.getByLabel('Pixel 2: provider').selectOption('linkedin');
    await page.getByLabel('Pixel 2: id').fill(examplePixelId('linkedin'));
    await page.getByLabel(/^Conversion tracking/).check();
    await page.getByRole('button', { name: 'Create code' }).click();
    await page
      .getByText(/Must be a Meta pixel id: 15 or 16 digits/)
      .first()
      .waitFor();
    expect(await page.getByLabel('Pixel 1: id').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByLabel('Pixel 2: id').getAttribute('aria-invalid')).to.equal(null);
    await look(page, 'code-pixels');
    await page.getByLabel('Pixel 1: id').fill(examplePixelId('meta'));
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'Shop poster');
    const [code] = (await svc.get('/v1/qr-codes?search=shop&limit=5', token)).body.data;
    expect(code.tracking_pixels).to.deep.equal([
      { provider: 'meta', id: examplePixelId('meta') },
      { provider: 'linkedin', id: examplePixelId('linkedin') },
    ]);
    expect(code.conversion_tracking).to.equal(true);
    // Back to the brand's list: null again.
    await page.getByLabel('Use the brand’s default pixels').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, token)).body.data.tracking_pixels).to.equal(null);
  });

  it('shows a code’s conversions per currency and the organization’s per code', async () => {
    const [code] = (await svc.get('/v1/qr-codes?search=shop&limit=5', token)).body.data;
    const row = await svc.app.db('qr_codes').where({ ulid: code.ulid }).first('id', 'org_id');
    const scans = [0, 1].map((i) =>
      scanRow(Date.now() - i, { org_id: Number(row.org_id), code_id: Number(row.id), visitor_hash: String(i + 1) }),
    );
    await insertScanEvents(svc.app.ch, scans);
    const sales = [
      { scan_id: scans[0].scan_id, event: 'sale', amount: '12.5', currency: 'EUR' },
      { scan_id: scans[1].scan_id, event: 'sale', amount: '7', currency: 'USD' },
      { scan_id: scans[1].scan_id, event: 'lead' },
    ];
    for (const body of sales) expect((await svc.post('/v1/conversions', token, body)).status).to.equal(201);

    await page.goto(org(`/codes/${code.ulid}/analytics`));
    await heading(page, 'Analytics: Shop poster');
    const totals = page.getByRole('table', { name: 'Conversions, last 30 days' });
    await totals.getByRole('row', { name: 'Conversions 3' }).waitFor();
    await totals.getByRole('row', { name: 'Converting visitors 2' }).waitFor();
    await totals.getByRole('row', { name: 'Amount (EUR) 12.50' }).waitFor();
    await totals.getByRole('row', { name: 'Amount (USD) 7.00' }).waitFor();
    await look(page, 'code-conversions');

    await page.goto(org('/overview'));
    const perCode = page.getByRole('table', { name: 'Conversions by code, last 30 days' });
    const entry = perCode.getByRole('row').filter({ hasText: 'Shop poster' });
    await entry.waitFor();
    expect(await entry.getByRole('cell').allTextContents()).to.deep.equal(['Shop poster', '3', '2', '12.50', '7.00']);
    await look(page, 'overview-conversions');
  });

  it('has no serious or critical axe-core violations', () => {
    expect(Object.keys(violations)).to.include.members([
      'settings',
      'brand-pixels',
      'code-pixels',
      'code-conversions',
      'overview-conversions',
    ]);
    for (const [name, found] of Object.entries(violations)) expect(found, name).to.deep.equal([]);
  });
});
