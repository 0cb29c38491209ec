// The hosted landing pages in a real browser: each type's page as a phone shows it, with its strict
// Content-Security-Policy on (a violation would be reported on the console), no request leaving
// for another host, and no axe-core violation of any impact. Screenshots go to the test output
// folder (docs/landing-pages.md shows them).
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { insertCustomDomain } from '../integration/redirect-fixtures.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';
import { axeViolations, launchBrowser, outputDir } from './browser.js';

describe('landing pages in Chromium', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let browser: Browser;
  let context: BrowserContext;
  let org: TestOrg;
  let domainUlid: string;

  before(async function () {
    this.timeout(600_000);
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    org = await svc.createOrg({ plan: 'professional_monthly' });
    // The browser asks for 127.0.0.1:<port>: a custom domain of that host answers it.
    const id = await insertCustomDomain(svc.app, org.org.id, '127.0.0.1');
    domainUlid = (await svc.app.db('domains').where({ id }).first('ulid')).ulid;
    browser = await launchBrowser();
    context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      deviceScaleFactor: 2,
      userAgent:
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
      locale: 'en-US',
    });
  });
  after(async () => {
    await browser?.close();
    await rd?.close();
    await svc?.close();
  });

  for (const [type, destination] of Object.entries(LANDING_CASES)) {
    it(`shows the ${type} page with no axe-core violation, no CSP report and no outside request`, async () => {
      const created = await svc.post('/v1/qr-codes', org.token, {
        slug: `b-${type}`,
        type,
        destination,
        domain_ulid: domainUlid,
        landing_config:
          type === 'links' ? { theme: { primary_color: '#00695c', background_color: '#e0f2f1' } } : undefined,
      });
      expect(created.status, created.text).to.equal(201);
      const page = await context.newPage();
      const console: string[] = [];
      const outside: string[] = [];
      page.on('console', (m) => console.push(m.text()));
      page.on('request', (r) => {
        if (!r.url().startsWith(`http://127.0.0.1:${rd.port}/`) && !r.url().startsWith('data:')) outside.push(r.url());
      });
      const res = await page.goto(`http://127.0.0.1:${rd.port}/b-${type}`);
      expect(res?.status()).to.equal(200);
      await page.screenshot({ path: path.join(outputDir(), `landing-${type}.png`), fullPage: true });
      expect(await axeViolations(page)).to.deep.equal([]);
      expect(console.filter((m) => /Content Security Policy|Refused/i.test(m))).to.deep.equal([]);
      expect(outside).to.deep.equal([]);
      if (type === 'links') {
        // Each link's icon is drawn: its <use> resolves to the sprite's symbol, which has a size.
        const boxes = await page.$$eval('a svg.icon use', (uses) =>
          uses.map((u) => (u as SVGUseElement).getBBox()).map((b) => [Math.round(b.width), Math.round(b.height)]),
        );
        expect(boxes).to.have.length(2);
        for (const [w, h] of boxes) expect(w * h).to.be.above(100);
      }
      await page.close();
    });
  }
});
