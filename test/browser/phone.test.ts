// The dashboard on a phone-sized screen (390 × 844 CSS pixels) in Debian's Chromium: every page
// (the visitor's sign-in, each section of an organization, a code, its analytics, the style
// designer, the staff area, the account) fits the width without scrolling the page sideways, its
// navigation can be reached (every section link lies inside the screen's width), and axe-core finds
// no violation of any impact. A screenshot of each page goes under the test output.
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../helpers/harness.js';
import { qrctl } from '../helpers/web-client.js';
import { axeViolations, outputDir, PHONE, signedInDashboard, type AxeViolation } from './browser.js';

describe('the dashboard on a phone-sized screen', function () {
  this.timeout(180_000);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let codeUlid: string;
  let styleUlid: string;
  const overflow: Record<string, string> = {};
  const unreachable: Record<string, string[]> = {};
  const violations: Record<string, AxeViolation[]> = {};
  const checked: string[] = [];

  before(async function () {
    this.timeout(600_000);
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard({ viewport: PHONE }));
    // The owner is platform staff too, so the staff area is one of the pages.
    await qrctl(svc.app, ['user', 'staff', '--email', 'owner@acme.example']);
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    codeUlid = (
      await svc.post('/v1/qr-codes', token, {
        slug: 'thespringmenuforallourcafes2026',
        name: 'Spring menu with a name long enough to wrap',
        destination: 'https://acme.example/menus/spring/2026/the-whole-menu-with-prices?utm_source=poster',
        domain_ulid: domain,
      })
    ).body.data.ulid;
    await svc.post('/v1/brands', token, { name: 'Roastery', brand_kit: { colors: { primary: '#7c2d12' } } });
    styleUlid = (
      await svc.post('/v1/qr-styles', token, { name: 'Navy', config: { dotsOptions: { color: '#1e3a8a' } } })
    ).body.data.ulid;
    await svc.post('/v1/tokens', token, { name: 'Phone test token', abilities: ['codes.view'] });
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  /** Opens a page, waits for its heading, and measures what the test asserts at the end. */
  async function check(name: string, url: string, nav: 'Sections' | 'Account' | null = 'Sections'): Promise<void> {
    await page.goto(url);
    await page.locator('h1').first().waitFor();
    // The style designer asks for its thumbnails one by one: on a busy machine that takes a while.
    await page.waitForLoadState('networkidle', { timeout: 150_000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(outputDir(), `phone-${name}.png`), fullPage: true });
    const sideways = await page.evaluate(
      () => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth,
    );
    if (sideways > 0) {
      // The outermost boxes that stick out (not those inside a box that scrolls or clips), to say what to fix.
      const culprits = await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .filter((e) => {
          for (let a = e.parentElement; a && a !== document.body; a = a.parentElement)
            if (getComputedStyle(a).overflowX !== 'visible') return false;
          return true;
        })
        .slice(0, 4)
        .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))`);
      overflow[name] = `${sideways} px: ${(culprits as string[]).join(', ')}`;
    }
    if (nav) {
      const links = page.getByRole('navigation', { name: nav }).getByRole('link');
      expect(await links.count(), name).to.be.greaterThan(nav === 'Sections' ? 5 : 1);
      const outside = await links.evaluateAll((all) =>
        all
          .filter((a) => {
            const r = a.getBoundingClientRect();
            return r.width === 0 || r.left < 0 || r.right > window.innerWidth;
          })
          .map((a) => a.textContent ?? ''),
      );
      if (outside.length) unreachable[name] = outside;
    }
    const found = await axeViolations(page);
    if (found.length) violations[name] = found;
    checked.push(name);
  }

  const org = (p: string) => `${svc.url}/app/o/${orgUlid}${p}`;

  it('fits every page of an organization into the width, with its navigation in reach', async function () {
    this.timeout(1_200_000);
    const pages: [string, string][] = [
      ['overview', '/overview'],
      ['codes', '/codes'],
      ['code-new', '/codes/new'],
      ['code', `/codes/${codeUlid}`],
      ['code-analytics', `/codes/${codeUlid}/analytics`],
      ['live', '/live'],
      ['brands', '/brands'],
      ['domains', '/domains'],
      ['styles', '/styles'],
      ['style-new', '/styles/new'],
      ['style', `/styles/${styleUlid}`],
      ['imports', '/imports'],
      ['tokens', '/tokens'],
      ['webhooks', '/webhooks'],
      ['wallet', '/wallet'],
      ['members', '/members'],
    ];
    for (const [name, p] of pages) await check(name, org(p));
    await check('account', `${svc.url}/app/account`, 'Account');
    await check('staff', `${svc.url}/app/staff`, 'Account');
    expect(overflow, 'pages scrolled sideways (px)').to.deep.equal({});
    expect(unreachable, 'section links outside the screen').to.deep.equal({});
  });

  it('wraps a long public URL on a phone only at its separators, never inside a word', async () => {
    await page.goto(org(`/codes/${codeUlid}`));
    const url = page.getByTestId('public-url');
    await url.waitFor();
    // Each part between two break opportunities lies on one line; the whole takes several.
    // A string, so the bundler's helpers never reach the page.
    const lines = (await page.evaluate(`(() => {
      const el = document.querySelector('[data-testid="public-url"]');
      const tops = (node) => {
        const range = document.createRange();
        range.selectNodeContents(node);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      };
      const parts = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE);
      return { whole: tops(el), parts: parts.map((p) => [p.textContent, tops(p)]) };
    })()`)) as { whole: number; parts: [string, number][] };
    expect(lines.whole).to.be.greaterThan(1);
    expect(lines.parts.filter(([, n]) => n !== 1)).to.deep.equal([]);
  });

  it('fits the sign-in page, and a signed-out visitor signs in on a phone', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await check('sign-in', `${svc.url}/app/sign-in`, null);
    expect(overflow['sign-in']).to.equal(undefined);
  });

  it('has no axe-core violation of any impact on any page', () => {
    expect(violations, JSON.stringify(violations, null, 1)).to.deep.equal({});
    expect(checked).to.have.lengthOf(19);
  });
});
