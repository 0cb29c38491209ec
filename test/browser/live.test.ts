// The dashboard's Live page in Debian's Chromium: the organization's scans appear as the redirect
// records them (the browser's own EventSource through the session), with the per-second count of
// the last five minutes; a landing page's action is listed by the service's name for it with its page
// view's visitor; the code's Live page shows only that code's scans; axe-core finds nothing
// serious and a screenshot of each goes under the test output.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { loadDashboard } from '../../server/web/assets.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { FALLBACK, hit, IPHONE, ANDROID } from '../integration/redirect-fixtures.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';
import { createAcme, heading, launchBrowser, pageChecks, setFirstPassword } from './browser.js';

describe('dashboard Live page in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let redirect: RedirectListener;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  const codes: Record<string, string> = {};
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    if (!loadDashboard()) throw new Error('dashboard/dist is missing: run make dashboard (make test does)');
    svc = await startTestService();
    redirect = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 100, tlsPort: null });
    browser = await launchBrowser();
    const created = await createAcme(svc.app);
    orgUlid = created.organization.ulid;
    const domain = (await svc.get('/v1/domains', created.token)).body.data[0].ulid;
    for (const slug of ['menu', 'poster']) {
      const res = await svc.post('/v1/qr-codes', created.token, {
        slug,
        name: slug === 'menu' ? 'Spring menu' : 'Poster',
        destination: `https://acme.example/${slug}`,
        domain_ulid: domain,
      });
      codes[slug] = res.body.data.ulid;
    }
    const links = await svc.post('/v1/qr-codes', created.token, {
      slug: 'links',
      name: 'Links',
      type: 'links',
      destination: LANDING_CASES.links,
      domain_ulid: domain,
    });
    expect(links.status).to.equal(201);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    await page.goto(created.sign_in_link);
    await setFirstPassword(page, 'a long enough password');
    await heading(page, 'Acme Coffee: overview');
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  const scan = async (slug: string, ua = IPHONE) => {
    const r = await hit(redirect.port, FALLBACK, `/acme/${slug}`, {
      headers: { 'User-Agent': ua, 'Accept-Language': 'fr-FR', Referer: 'https://news.example/story' },
    });
    expect(r.status).to.equal(302);
  };
  const rows = () => page.locator('table tbody tr');

  it('shows the organization’s scans as they are recorded, with the per-second count', async () => {
    await page.getByRole('link', { name: 'Live' }).click();
    await heading(page, 'Live scans');
    await page.getByRole('status').filter({ hasText: 'Live: scans appear' }).waitFor();
    await scan('menu');
    await scan('poster', ANDROID);
    await scan('menu');
    await page.locator('table tbody tr a').nth(2).waitFor({ timeout: 20_000 });
    expect(await rows().count()).to.equal(3);
    const first = rows().first();
    expect(await first.locator('td').nth(1).innerText()).to.equal('acme/menu');
    expect(await first.locator('td').nth(4).innerText()).to.equal('fr');
    expect(await first.locator('td').nth(5).innerText()).to.equal('news.example');
    await page.getByTestId('live-total').filter({ hasText: '3' }).waitFor();
    expect(
      await page.getByRole('img', { name: /Scans per second over the last 5 minutes: 3 in all/ }).count(),
    ).to.equal(1);
    await look(page, 'live');
  });

  it('lists a landing page’s action by its name, with the country, device and language of its page view', async () => {
    const view = await hit(redirect.port, FALLBACK, '/acme/links', {
      headers: { 'User-Agent': ANDROID, 'Accept-Language': 'de-DE' },
    });
    expect(view.status).to.equal(200);
    // The action follows once the page view's scan is listed (its visitor tells the row's columns).
    await page.getByRole('cell', { name: 'acme/links' }).waitFor({ timeout: 20_000 });
    const second = await hit(redirect.port, FALLBACK, '/acme/links?qr_action=link&i=1', {
      headers: { 'User-Agent': ANDROID, 'Accept-Language': 'de-DE' },
    });
    expect(second.headers.location).to.equal('https://github.com/example');
    await page.getByRole('cell', { name: 'Link 2', exact: true }).waitFor({ timeout: 20_000 });
    const cells = await rows().first().locator('td').allInnerTexts();
    expect(cells.slice(1)).to.deep.equal(['acme/links', '–', 'mobile', 'de', '–', 'Link 2']);
    expect(await rows().nth(1).locator('td').last().innerText()).to.equal('Scan');
  });

  it('shows only the code’s scans on the code’s Live page', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/${codes.poster}/live`);
    await heading(page, 'Live: Poster');
    await page.getByRole('status').filter({ hasText: 'Live: scans appear' }).waitFor();
    await scan('menu');
    await scan('poster', ANDROID);
    await page.getByRole('cell', { name: 'mobile' }).waitFor({ timeout: 20_000 });
    // The menu scan, recorded first, never shows here.
    await page.getByTestId('live-total').filter({ hasText: '1' }).waitFor();
    expect(await rows().count()).to.equal(1);
    await look(page, 'live-code');
  });

  it('finds no serious accessibility violation on the Live pages', () => {
    expect(violations).to.deep.equal({ live: [], 'live-code': [] });
  });
});
