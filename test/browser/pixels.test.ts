// Tracking pixels in a real browser: the consent banner of the pixel page, the network log of the
// visit (no provider is asked for anything before "Accept", and nothing after "Decline"), the page's
// Content-Security-Policy refusing every other host, and the answer remembered by the cookie.
// Requests that leave for the providers are answered by the test (route) with empty scripts, and the
// destination is a small page served by the test on loopback: the machine has no way out, and the
// test needs none.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { insertCustomDomain } from '../integration/redirect-fixtures.js';
import { examplePixelId } from '../../server/qr-codes/pixels.js';
import { axeViolations, launchBrowser, outputDir } from './browser.js';

const PROVIDER_HOSTS = /^https:\/\/(connect\.facebook\.net|www\.facebook\.com|www\.googletagmanager\.com)\//;

describe('tracking pixels in Chromium: consent first, CSP for the rest', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let browser: Browser;
  let org: TestOrg;
  let domainUlid: string;
  let n = 0;
  let site: http.Server;
  let DESTINATION = '';

  before(async function () {
    this.timeout(600_000);
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>After</title><p>Arrived</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    DESTINATION = `http://127.0.0.1:${(site.address() as AddressInfo).port}/after`;
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    org = await svc.createOrg();
    const id = await insertCustomDomain(svc.app, org.org.id, '127.0.0.1');
    domainUlid = (await svc.app.db('domains').where({ id }).first('ulid')).ulid;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await rd?.close();
    await svc?.close();
    site?.close();
  });

  /** A context whose requests are logged in order; anything leaving 127.0.0.1 is answered by the test. */
  async function visitor(
    locale = 'en-US',
  ): Promise<{ context: BrowserContext; log: string[]; served: string[]; refused: string[] }> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, locale });
    const log: string[] = [];
    context.on('request', (r) => log.push(r.url()));
    // What the browser attempted (log), what actually went out (served), and what it refused itself.
    const served: string[] = [];
    const refused: string[] = [];
    context.on('requestfailed', (r) => refused.push(`${r.url()} ${r.failure()?.errorText ?? ''}`));
    await context.route(/^https:\/\//, (route) => {
      served.push(route.request().url());
      return route.fulfill({ contentType: 'application/javascript', body: '' });
    });
    return { context, log, served, refused };
  }

  async function pixelCode(): Promise<string> {
    const slug = `px-${++n}`;
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug,
      destination: DESTINATION,
      domain_ulid: domainUlid,
      tracking_pixels: [
        { provider: 'meta', id: examplePixelId('meta') },
        { provider: 'ga4', id: examplePixelId('ga4') },
      ],
    });
    expect(res.status, res.text).to.equal(201);
    return `http://127.0.0.1:${rd.port}/${slug}`;
  }

  /** Hosts the page tries that its CSP refuses: reported by securitypolicyviolation, never requested. */
  function tryOtherHosts(page: Page): Promise<string[]> {
    return page.evaluate(
      () =>
        new Promise<string[]>((resolve) => {
          const seen: string[] = [];
          document.addEventListener('securitypolicyviolation', (e) => {
            seen.push(`${e.effectiveDirective} ${e.blockedURI}`);
            if (seen.length === 3) resolve(seen.sort());
          });
          const img = new Image();
          img.src = 'https://evil.example/p.gif';
          const s = document.createElement('script');
          s.src = 'https://evil.example/x.js';
          document.head.appendChild(s);
          void fetch('https://evil.example/beacon').catch(() => undefined);
        }),
    );
  }

  it('asks first: no provider request before Accept, the CSP refuses other hosts, Accept loads the pixels and moves on', async () => {
    const url = await pixelCode();
    const { context, log, served, refused } = await visitor();
    const page = await context.newPage();
    const res = await page.goto(url);
    expect(res?.status()).to.equal(200);
    await page.getByRole('link', { name: 'Accept' }).waitFor();
    await page.screenshot({ path: path.join(outputDir(), 'pixels-consent-banner.png') });
    expect(await axeViolations(page, ['serious', 'critical'])).to.deep.equal([]);
    expect(await tryOtherHosts(page)).to.deep.equal([
      'connect-src https://evil.example/beacon',
      'img-src https://evil.example/p.gif',
      'script-src-elem https://evil.example/x.js',
    ]);
    expect(
      log.filter((u) => PROVIDER_HOSTS.test(u)),
      'provider requests before consent',
    ).to.deep.equal([]);
    const before = log.length;

    await Promise.all([page.waitForURL(DESTINATION), page.getByRole('link', { name: 'Accept' }).click()]);
    const after = log.slice(before);
    expect(after.some((u) => u === 'https://connect.facebook.net/en_US/fbevents.js')).to.equal(true);
    expect(after.some((u) => u.startsWith('https://www.googletagmanager.com/gtag/js?id=G-A1B2C3D4E5'))).to.equal(true);
    expect(after.some((u) => /\?qr_consent=granted&qr_scan=[0-9A-Z]{26}$/.test(u))).to.equal(true);
    expect(
      served.filter((u) => u.includes('evil.example')),
      'requests that went out',
    ).to.deep.equal([]);
    // The script and the image are refused by the browser as CSP (the fetch is refused before it
    // becomes a request at all: the violation above is its only trace).
    expect(refused.filter((u) => u.includes('evil.example')).sort()).to.deep.equal([
      'https://evil.example/p.gif csp',
      'https://evil.example/x.js csp',
    ]);
    const cookie = (await context.cookies()).find((c) => c.name === 'qr_consent');
    expect(cookie?.value).to.equal('granted');
    expect(cookie?.httpOnly).to.equal(true);
    // 6 months from now, within a minute.
    expect(Math.abs((cookie?.expires ?? 0) - (Date.now() / 1000 + 183 * 86400))).to.be.below(60);

    // The next scan remembers: the pixels load at once, no banner, and the page moves on by itself.
    const again = await context.newPage();
    const start = log.length;
    await again.goto(url);
    expect(await again.getByRole('link', { name: 'Accept' }).count()).to.equal(0);
    await again.waitForURL(DESTINATION);
    expect(log.slice(start).some((u) => u === 'https://connect.facebook.net/en_US/fbevents.js')).to.equal(true);
    await context.close();
  });

  it('Decline: no provider is ever asked, and the visitor arrives', async () => {
    const url = await pixelCode();
    const { context, log } = await visitor('de-DE');
    const page = await context.newPage();
    await page.goto(url);
    await Promise.all([page.waitForURL(DESTINATION), page.getByRole('link', { name: 'Ablehnen' }).click()]);
    expect(log.filter((u) => PROVIDER_HOSTS.test(u))).to.deep.equal([]);
    expect((await context.cookies()).find((c) => c.name === 'qr_consent')?.value).to.equal('denied');
    // Declined once: the next scan is the plain redirect.
    const next = await context.newPage();
    const start = log.length;
    await next.goto(url);
    await next.waitForURL(DESTINATION);
    expect(log.slice(start).filter((u) => PROVIDER_HOSTS.test(u))).to.deep.equal([]);
    await context.close();
  });

  it('no answer: the page moves on by itself after its time without loading anything', async () => {
    const slug = `px-${++n}`;
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug,
      destination: DESTINATION,
      domain_ulid: domainUlid,
      prelander_enabled: true,
      prelander_seconds: 2,
      tracking_pixels: [{ provider: 'linkedin', id: examplePixelId('linkedin') }],
    });
    expect(res.status, res.text).to.equal(201);
    const { context, log } = await visitor();
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${rd.port}/${slug}`);
    await page.waitForURL(DESTINATION, { timeout: 15_000 });
    expect(log.some((u) => /\?qr_consent=none&qr_scan=[0-9A-Z]{26}$/.test(u))).to.equal(true);
    expect(log.filter((u) => u.includes('licdn.com') || u.includes('linkedin.com'))).to.deep.equal([]);
    await context.close();
  });
});
