// custom_js in Chromium over HTTPS on a verified custom domain, end to end against real servers on
// loopback: the test DNS server (the host's A and TXT records), Debian's pebble issuing the domain's
// certificate through the worker's ACME job (HTTP-01 against the redirect listener), and the
// redirect's TLS port chosen by SNI. The browser then enforces what the service promises: the page
// loads the script by src + integrity and allows it only by its hash (CSP Level 3: an external
// script is allowed by a hash-source when its integrity metadata names it; SRI refuses bytes that
// differ), so a script whose content differs from the hash does not run.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser, BrowserContext } from 'playwright-core';
import type { RedirectListener } from '../../server/redirect/listener.js';
import { CUSTOM_SCRIPT_PREFIX } from '../../server/qr-codes/custom-js.js';
import { addVerifiedDomain, domainUntil, startHttpsStack, tlsGet, type HttpsStack } from '../helpers/custom-domains.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import type { TestOrg, TestService } from '../helpers/harness.js';
import type { Pebble } from '../helpers/pebble.js';
import { loadDashboard } from '../../server/web/assets.js';
import { requireOrganization } from '../../server/organizations/service.js';
import { qrctl } from '../helpers/web-client.js';
import { heading, launchBrowser, signedInAcme } from './browser.js';

/** Marks the page it runs on, and says so in the console. */
const SCRIPT = "document.documentElement.setAttribute('data-custom-js','ran');console.log('custom-js ran');";

describe('custom_js in Chromium over HTTPS (pebble certificate): runs when intact, blocked when it differs from its hash', function () {
  this.timeout(180_000);
  let dns: TestDnsServer;
  let pebble: Pebble;
  let svc: TestService;
  let rd: RedirectListener;
  let stack: HttpsStack;
  let browser: Browser;
  let org: TestOrg;
  let site: http.Server;
  let destination = '';
  const tag = crypto.randomBytes(3).toString('hex');
  const host = `go.${tag}.customer.test`;
  let domainUlid: string;

  before(async function () {
    // The first run on a fresh machine installs pebble and Chromium with apt-get.
    this.timeout(900_000);
    site = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>After</title><p>Arrived</p>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    destination = `http://127.0.0.1:${(site.address() as AddressInfo).port}/after`;
    stack = await startHttpsStack();
    ({ dns, pebble, svc, redirect: rd } = stack);
    org = await svc.createOrg({ plan: 'enterprise_monthly' });
    domainUlid = (await addVerifiedDomain(svc, dns, org, host)).ulid;
    await domainUntil(svc, org, domainUlid, (d) => d.ssl_status === 'active', {
      ms: 60_000,
      more: () => pebble.output().slice(-2000),
    });
    // Chromium reaches the custom host on loopback; the certificate chain is checked with pebble's
    // roots by tlsGet below (Chromium does not know pebble's new-every-start CA).
    browser = await launchBrowser([`--host-resolver-rules=MAP ${host} 127.0.0.1`]);
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
    site?.close();
  });

  const origin = () => `https://${host}:${rd.tlsPort}`;

  async function code(extra: Record<string, unknown>): Promise<string> {
    const slug = `c${crypto.randomBytes(3).toString('hex')}`;
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug,
      domain_ulid: domainUlid,
      custom_js: SCRIPT,
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.public_url).to.equal(`https://${host}/${slug}`);
    return slug;
  }

  async function visitor(): Promise<{ context: BrowserContext; console: string[]; failed: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const console: string[] = [];
    const failed: string[] = [];
    context.on('console', (m) => console.push(m.text()));
    context.on('requestfailed', (r) => failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`));
    return { context, console, failed };
  }

  it('serves the page and the script over HTTPS with the certificate pebble issued for the host', async () => {
    const slug = await code({ type: 'vcard', destination: { name: 'Ada Lovelace' } });
    const page = await tlsGet(rd.tlsPort!, host, `/${slug}`, [pebble.rootPem, pebble.intermediatePem]);
    expect(page.authorized).to.equal(true);
    expect(page.subject).to.equal(`DNS:${host}`);
    expect(page.status).to.equal(200);
    const src = /<script src="([^"]+)" integrity="(sha384-[^"]+)"><\/script>/.exec(page.body);
    expect(src, page.body).to.not.equal(null);
    expect(String(page.headers['content-security-policy'])).to.include(`script-src '${src![2]}'`);
    const file = await tlsGet(rd.tlsPort!, host, src![1], [pebble.rootPem, pebble.intermediatePem]);
    expect(file.status).to.equal(200);
    expect(file.body).to.equal(SCRIPT);
  });

  it('runs on the landing page when the file is intact', async () => {
    const slug = await code({ type: 'vcard', destination: { name: 'Ada Lovelace' } });
    const { context, console } = await visitor();
    const page = await context.newPage();
    const res = await page.goto(`${origin()}/${slug}`);
    expect(res?.status()).to.equal(200);
    await page.waitForFunction(() => document.documentElement.getAttribute('data-custom-js') === 'ran');
    expect(console).to.include('custom-js ran');
    await context.close();
  });

  /**
   * Opens a code's landing page with its script file answered by the test with `body` (a proxy or a
   * cache changing the file on its way: same URL, other bytes); returns what ran.
   */
  async function withScriptBody(
    body: string,
  ): Promise<{ marks: (string | null)[]; console: string[]; answered: number }> {
    const slug = await code({ type: 'vcard', destination: { name: 'Ada Lovelace' } });
    const { context, console } = await visitor();
    let answered = 0;
    await context.route(new RegExp(CUSTOM_SCRIPT_PREFIX.replace(/\//g, '\\/')), async (route) => {
      answered++;
      await route.fulfill({ status: 200, contentType: 'text/javascript; charset=utf-8', body });
    });
    const page = await context.newPage();
    const res = await page.goto(`${origin()}/${slug}`);
    expect(res?.status()).to.equal(200);
    await page.waitForLoadState('load');
    // The page itself works either way.
    expect(await page.locator('h1').textContent()).to.include('Ada Lovelace');
    const marks = await page.evaluate(() => [
      document.documentElement.getAttribute('data-custom-js'),
      document.documentElement.getAttribute('data-tampered'),
    ]);
    await context.close();
    return { marks, console, answered };
  }

  it('runs when the test answers the file with the same bytes (the control of the next test)', async () => {
    const run = await withScriptBody(SCRIPT);
    expect(run.answered).to.equal(1);
    expect(run.marks).to.deep.equal(['ran', null]);
  });

  it('does not run when the file’s content differs from the hash in the page (SRI + CSP)', async () => {
    const run = await withScriptBody(`${SCRIPT}document.documentElement.setAttribute('data-tampered','yes');`);
    expect(run.answered).to.equal(1);
    expect(run.marks).to.deep.equal([null, null]);
    expect(run.console).to.not.include('custom-js ran');
    expect(run.console.join('\n')).to.match(/integrity/i);
  });

  it('a script not named by the page’s hash is refused even from the same origin', async () => {
    const slug = await code({ type: 'vcard', destination: { name: 'Ada Lovelace' } });
    const { context, console } = await visitor();
    const page = await context.newPage();
    await page.goto(`${origin()}/${slug}`);
    await page.waitForFunction(() => document.documentElement.getAttribute('data-custom-js') === 'ran');
    // A script element added later with the same file but no integrity: the CSP has no 'self'.
    const src = await page.locator('script[integrity]').getAttribute('src');
    const loaded = await page.evaluate(
      (s) =>
        new Promise<string>((resolve) => {
          const el = document.createElement('script');
          el.src = s!;
          el.onload = () => resolve('loaded');
          el.onerror = () => resolve('refused');
          document.head.appendChild(el);
        }),
      src,
    );
    expect(loaded).to.equal('refused');
    expect(console.join('\n')).to.match(/Content Security Policy/);
    await context.close();
  });

  it('the dashboard’s code form offers the script (with its byte counter) only on a verified custom domain, and saves it', async () => {
    if (!loadDashboard()) throw new Error('dashboard/dist is missing: run make dashboard (make test does)');
    const { page, orgUlid, token } = await signedInAcme(svc, browser);
    await qrctl(svc.app, ['org', 'set-plan', '--org', 'acme', '--plan', 'enterprise_monthly']);
    const acme = { org: await requireOrganization(svc.app.db, 'acme'), token, ownerEmail: 'owner@acme.example' };
    const acmeHost = `qr.${tag}.acme.test`;
    const domain = await addVerifiedDomain(svc, dns, acme, acmeHost);
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/new`);
    await heading(page, 'New code');
    await page.getByLabel('Slug', { exact: true }).fill('menu');
    await page.getByLabel('Destination URL', { exact: true }).fill('https://example.com/menu');
    const fallback = await page.getByLabel('Domain', { exact: true }).inputValue();
    // On the shared domain there is no script field.
    expect(await page.getByLabel('Script', { exact: true }).count()).to.equal(0);
    await page.getByLabel('Domain', { exact: true }).selectOption(domain.ulid);
    await page.getByLabel('Script', { exact: true }).fill('void "é";');
    // 10 bytes: é is two bytes of UTF-8.
    await page.getByText('10 of 10240 bytes (UTF-8)').waitFor();
    await page.getByText(/runs before any consent answer/).waitFor();
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'menu');
    const codes = (await svc.get('/v1/qr-codes', token)).body.data;
    expect(codes.map((c: any) => [c.slug, c.custom_js])).to.deep.equal([['acme/menu', 'void "é";']]);
    // Moved back to the shared domain: the form says the script goes, and saving removes it.
    await page.getByLabel('Domain', { exact: true }).selectOption(fallback);
    expect(await page.getByLabel('Script', { exact: true }).count()).to.equal(0);
    await page.getByText(/saving it on this domain\s+removes the script/).waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved').waitFor();
    const after = (await svc.get(`/v1/qr-codes/${codes[0].ulid}`, token)).body.data;
    expect(after).to.include({ custom_js: null });
    expect(after.domain.ulid).to.equal(fallback);
    await page.context().close();
  });

  it('a url code answers with the interstitial: the script runs first, then the visitor arrives at the destination', async () => {
    const slug = await code({ destination });
    const { context, console } = await visitor();
    const page = await context.newPage();
    await page.goto(`${origin()}/${slug}`);
    await page.waitForURL(destination);
    expect(await page.locator('p').textContent()).to.equal('Arrived');
    expect(console).to.include('custom-js ran');
    await context.close();
  });
});
