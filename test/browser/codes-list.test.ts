// The Codes list in Debian's Chromium: each filter (status, type, brand, domain), the search and
// the order shows the codes the API lists for the same query, in the same order; everything is in
// the address, so a reload, back and forward keep the filters, the order and the page (keyset
// cursors included); a filter change starts again at page 1; axe-core finds no violation of any
// impact; a screenshot goes under the test output for docs/dashboard.md.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ulid } from 'ulid';
import type { TestService } from '../helpers/harness.js';
import { axeViolations, heading, pageChecks, signedInDashboard } from './browser.js';

/** The dashboard's page size (dashboard/src/pages/codes.tsx). */
const PAGE_SIZE = 25;

describe('dashboard Codes list filters, order and paging in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  const brands: Record<string, string> = {};
  let custom: string;
  const { look } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard());
    const shared = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    custom = ulid();
    const org = await svc.app.db('organizations').where({ ulid: orgUlid }).first('id');
    await svc.app.db('domains').insert({
      ulid: custom,
      org_id: org.id,
      host: 'go.acme.test',
      type: 'custom',
      status: 'active',
    });
    for (const name of ['Coffee', 'Books'])
      brands[name] = (await svc.post('/v1/brands', token, { name, slug: name.toLowerCase() })).body.data.ulid;
    // 36 codes: every third a contact card, brands and domains in turn, every fifth paused.
    const words = ['Poster', 'menu', 'Flyer', 'table tent', 'Receipt', 'window'];
    for (let i = 0; i < 36; i++) {
      const vcard = i % 3 === 0;
      const res = await svc.post('/v1/qr-codes', token, {
        slug: `code-${String(i).padStart(2, '0')}`,
        name: i === 7 ? null : `${words[i % words.length]} ${36 - i}`,
        ...(vcard
          ? { type: 'vcard', destination: { name: `Person ${i}` } }
          : { destination: `https://acme.example/${i}` }),
        domain_ulid: i % 4 === 0 ? custom : shared,
        brand_ulid: i % 2 === 0 ? brands.Coffee : i % 5 === 0 ? brands.Books : undefined,
        status: i % 5 === 1 ? 'paused' : 'active',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  const codesUrl = (q = '') => `${svc.url}/app/o/${orgUlid}/codes${q}`;
  const caption = () => page.locator('table caption').textContent();
  /**
   * The names in the table once it shows `expected` (the list answers asynchronously, and on a busy
   * machine after the previous rows' QR thumbnails, which hold the browser's connections).
   */
  async function shown(expected: string[]): Promise<string[]> {
    const cells = page.locator('table tbody tr td:nth-child(3)');
    await page
      .waitForFunction(
        (want) =>
          [...document.querySelectorAll('table tbody tr td:nth-child(3)')].map((td) => td.textContent).join('|') ===
          want.join('|'),
        expected,
        { timeout: 40_000 },
      )
      .catch(() => undefined);
    return cells.allTextContents();
  }
  /** The API's page for the same query, by the names the table shows. */
  async function apiPage(q: string, cursor?: string): Promise<{ names: string[]; next: string | null }> {
    const res = await svc.get(`/v1/qr-codes?limit=${PAGE_SIZE}&${q}${cursor ? `&cursor=${cursor}` : ''}`, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return {
      names: res.body.data.map((c: { name: string | null; slug: string }) => c.name || c.slug.split('/')[1]),
      next: res.body.meta.next_cursor,
    };
  }

  it('filters by status, type, brand and domain as the API does, each in the address', async () => {
    await page.goto(codesUrl());
    await heading(page, 'Codes');
    const first = await apiPage('order=newest');
    expect(await shown(first.names)).to.deep.equal(first.names);

    await page.getByLabel('Type').selectOption({ label: 'Contact card' });
    await page.waitForURL(/type=vcard/);
    let want = (await apiPage('order=newest&type=vcard')).names;
    expect(want).to.have.length(12);
    expect(await shown(want)).to.deep.equal(want);

    await page.getByLabel('Brand').selectOption({ label: 'Coffee' });
    await page.waitForURL(new RegExp(`brand=${brands.Coffee}`));
    want = (await apiPage(`order=newest&type=vcard&brand_ulid=${brands.Coffee}`)).names;
    expect(want).to.have.length(6);
    expect(await shown(want)).to.deep.equal(want);

    await page.getByLabel('Domain').selectOption({ label: 'go.acme.test' });
    await page.waitForURL(new RegExp(`domain=${custom}`));
    want = (await apiPage(`order=newest&type=vcard&brand_ulid=${brands.Coffee}&domain_ulid=${custom}`)).names;
    expect(want).to.have.length(3);
    expect(await shown(want)).to.deep.equal(want);

    await page.getByLabel('Status').selectOption({ label: 'Paused' });
    await page.waitForURL(/status=paused/);
    want = (await apiPage(`order=newest&type=vcard&brand_ulid=${brands.Coffee}&domain_ulid=${custom}&status=paused`))
      .names;
    expect(await shown(want)).to.deep.equal(want);
    if (!want.length) await page.getByText('No code matches.').waitFor();

    // Reload keeps every filter; back undoes the last one.
    await page.reload();
    await heading(page, 'Codes');
    expect(await page.getByLabel('Status').inputValue()).to.equal('paused');
    expect(await page.getByLabel('Type').inputValue()).to.equal('vcard');
    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('status='));
    want = (await apiPage(`order=newest&type=vcard&brand_ulid=${brands.Coffee}&domain_ulid=${custom}`)).names;
    expect(await shown(want)).to.deep.equal(want);
    expect(await page.getByLabel('Domain').inputValue()).to.equal(custom);
  });

  it('searches by name, slug and destination and orders by name, as the API does', async () => {
    await page.goto(codesUrl());
    await heading(page, 'Codes');
    await page.getByLabel('Search').fill('poster');
    await page.waitForURL(/q=poster/);
    let want = (await apiPage('order=newest&search=poster')).names;
    expect(want).to.have.length(6);
    expect(await shown(want)).to.deep.equal(want);
    expect(await caption()).to.equal('Codes matching “poster”, newest first, page 1');

    await page.getByLabel('Order').selectOption({ label: 'Name, A to Z' });
    await page.waitForURL(/order=name/);
    want = (await apiPage('order=name&search=poster')).names;
    expect(await shown(want)).to.deep.equal(want);
    expect(want).to.deep.equal([...want].sort((x, y) => x.localeCompare(y, 'en', { sensitivity: 'base' })));

    // A slug and a destination are searched too.
    await page.getByLabel('Search').fill('code-07');
    await page.waitForURL(/q=code-07/);
    expect(await shown(['code-07'])).to.deep.equal(['code-07']);
    await page.getByLabel('Search').fill('acme.example/35');
    want = (await apiPage('order=name&search=acme.example%2F35')).names;
    expect(want).to.have.length(1);
    expect(await shown(want)).to.deep.equal(want);
  });

  it('keeps its place: the next page in the address, through reload, back and forward; a filter starts again at page 1', async () => {
    await page.goto(codesUrl('?order=name_desc'));
    await heading(page, 'Codes');
    const one = await apiPage('order=name_desc');
    const two = await apiPage('order=name_desc', one.next!);
    expect(one.names).to.have.length(PAGE_SIZE);
    expect(two.names).to.have.length(36 - PAGE_SIZE);
    expect(await shown(one.names)).to.deep.equal(one.names);

    await page.getByRole('button', { name: 'Next page' }).click();
    await page.waitForURL(/pages=/);
    expect(await shown(two.names)).to.deep.equal(two.names);
    expect(await caption()).to.equal('Codes, by name, Z to A, page 2');
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).to.equal(true);

    await page.reload();
    await heading(page, 'Codes');
    expect(await shown(two.names)).to.deep.equal(two.names);
    expect(await caption()).to.equal('Codes, by name, Z to A, page 2');

    await page.goBack();
    await page.waitForURL((u) => !u.search.includes('pages='));
    expect(await shown(one.names)).to.deep.equal(one.names);
    await page.goForward();
    await page.waitForURL(/pages=/);
    expect(await shown(two.names)).to.deep.equal(two.names);

    await page.getByRole('button', { name: 'Previous page' }).click();
    expect(await shown(one.names)).to.deep.equal(one.names);
    await page.getByRole('button', { name: 'Next page' }).click();
    expect(await shown(two.names)).to.deep.equal(two.names);
    await page.getByLabel('Type').selectOption({ label: 'Website' });
    await page.waitForURL((u) => u.search.includes('type=url') && !u.search.includes('pages='));
    const urls = (await apiPage('order=name_desc&type=url')).names;
    expect(await shown(urls)).to.deep.equal(urls);
    expect(await caption()).to.equal('Codes, by name, Z to A, page 1');
  });

  it('has no axe-core violation of any impact with the filters shown, and is pictured for the docs', async () => {
    await page.goto(codesUrl(`?brand=${brands.Coffee}&order=name`));
    await heading(page, 'Codes');
    const want = (await apiPage(`order=name&brand_ulid=${brands.Coffee}`)).names;
    expect(await shown(want)).to.deep.equal(want);
    await page.getByTestId('code-thumb').first().waitFor();
    expect(await axeViolations(page)).to.deep.equal([]);
    await look(page, 'codes-list-filtered');
  });
});
