// GS1 products in the dashboard in Debian's Chromium: a product made with the form (GTIN, its
// links with link types of the shipped vocabulary, languages, the default link), the service's 422
// shown beside the field it names, and the product's page listing the links of the product and its
// lot and the scans per lot resolved by the real resolver. axe-core on each page.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import type { TestService } from '../helpers/harness.js';
import { DESKTOP, FALLBACK, hit } from '../integration/redirect-fixtures.js';
import { heading, pageChecks, signedInDashboard } from './browser.js';

describe('GS1 products in the dashboard in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let productUlid: string;
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard());
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50 });
  });

  after(async () => {
    await browser?.close();
    await rd?.close();
    await svc?.close();
  });

  it('makes a product with the form: GTIN, links of the vocabulary, a language, the default; a wrong check digit shown at the GTIN', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/new`);
    await heading(page, 'New code');
    const gs1 = page.getByRole('radio', { name: /GS1 product/ });
    expect(await gs1.isDisabled()).to.equal(false);
    await gs1.check();
    await page.getByLabel('GTIN', { exact: true }).fill('9506000134353');
    await page.getByRole('button', { name: 'Add link' }).click();
    await page.getByLabel('Link 1: link type').selectOption('gs1:pip');
    await page.getByLabel('Link 1: title').fill('Product page');
    await page.getByLabel('Link 1: URL').fill('https://brand.example/rice');
    await page.getByLabel('Link 1: default link').check();
    await page.getByRole('button', { name: 'Add link' }).click();
    await page.getByLabel('Link 2: link type').selectOption('gs1:recipeInfo');
    await page.getByLabel('Link 2: title').fill('Rezepte');
    await page.getByLabel('Link 2: URL').fill('https://brand.example/de/rezepte');
    await page.getByLabel('Link 2: languages (hreflang)').fill('de');
    await page.getByLabel('Slug').fill('rice');
    await look(page, 'gs1-new');
    await page.getByRole('button', { name: 'Create code' }).click();
    await page.getByText('Wrong check digit: 9506000134353 should end in 2, not 3.').first().waitFor();
    await page.getByLabel('GTIN', { exact: true }).fill('9506000134352');
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'rice');
    const codes = (await svc.get('/v1/qr-codes', token)).body.data;
    expect(codes).to.have.length(1);
    productUlid = codes[0].ulid;
    expect(codes[0].type).to.equal('gs1');
    expect(codes[0].destination).to.deep.equal({
      gtin: '09506000134352',
      links: [
        { link_type: 'gs1:pip', href: 'https://brand.example/rice', title: 'Product page', default: true },
        { link_type: 'gs1:recipeInfo', href: 'https://brand.example/de/rezepte', title: 'Rezepte', hreflang: ['de'] },
      ],
    });
  });

  it('shows the product’s page: the links of the product and its lot, and the scans per lot', async () => {
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const lot = await svc.post('/v1/qr-codes', token, {
      slug: 'rice-a1',
      type: 'gs1',
      domain_ulid: domain,
      destination: {
        gtin: '09506000134352',
        lot: 'A1',
        links: [{ link_type: 'gs1:recallStatus', href: 'https://brand.example/recall/a1', title: 'Lot A1 recalled' }],
      },
    });
    expect(lot.status, lot.text).to.equal(201);
    const slug = (await svc.get('/v1/organization', token)).body.data.slug;
    for (const l of ['A1', 'A1', 'B7'])
      await hit(rd.port, FALLBACK, `/${slug}/01/09506000134352/10/${l}`, { headers: { 'User-Agent': DESKTOP } });
    await rd.scans.flush();
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/${productUlid}`);
    await heading(page, 'rice');
    const product = page.getByRole('region', { name: 'Product 09506000134352' });
    await product.getByRole('link', { name: 'Product (all lots)' }).waitFor();
    await product.getByRole('link', { name: 'lot A1' }).waitFor();
    await product.getByRole('cell', { name: 'Lot A1 recalled' }).waitFor();
    await product.getByRole('cell', { name: 'https://brand.example/de/rezepte' }).waitFor();
    const rows = await page
      .getByTestId('gs1-lot-scans')
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).to.deep.equal([
      ['A1', '2', '1'],
      ['B7', '1', '1'],
    ]);
    await look(page, 'gs1-product');
  });

  it('has no serious or critical axe-core violations on these pages', () => {
    expect(Object.keys(violations)).to.include.members(['gs1-new', 'gs1-product']);
    for (const [name, found] of Object.entries(violations)) expect(found, name).to.deep.equal([]);
  });
});
