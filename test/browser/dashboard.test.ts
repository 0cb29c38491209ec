// The dashboard end to end in Debian's Chromium: a qrctl link to the first password, the overview
// chart from seeded scans, a code made with the form, analytics as CSV, a token shown once, a
// staff top-up in the owner's ledger, a CSV import with a bad row, what a viewer and a stranger
// may not do, sign-out, axe-core on every page and a screenshot of each under the test output.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { expect } from 'chai';
import type { Runner } from 'graphile-worker';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ulid } from 'ulid';
import { insertScanEvents, type ScanEvent } from '../../server/analytics/synthetic-scans.js';
import { addMember } from '../../server/organizations/service.js';
import { loadDashboard } from '../../server/web/assets.js';
import { startWorker } from '../../workers/index.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { linkSecret, qrctl } from '../helpers/web-client.js';
import { createAcme, heading, launchBrowser, pageChecks, setFirstPassword, tmpFile } from './browser.js';

const PASSWORD = 'a long enough password';
const DAY = 86_400_000;

describe('dashboard in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let worker: Runner;
  let owner: BrowserContext;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let seededCode: string;
  let linkUrl = '';
  let invitation = '';
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    if (!loadDashboard()) throw new Error('dashboard/dist is missing: run make dashboard (make test does)');
    svc = await startTestService();
    worker = await startWorker(svc.app);
    browser = await launchBrowser();
    const created = await createAcme(svc.app);
    orgUlid = created.organization.ulid;
    token = created.token;
    linkUrl = created.sign_in_link;
    // A code with scans over the last days, for the overview's chart and top codes.
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const code = (
      await svc.post('/v1/qr-codes', token, {
        slug: 'menu',
        name: 'Spring menu',
        destination: 'https://acme.example/menu',
        domain_ulid: domain,
      })
    ).body.data;
    seededCode = code.ulid;
    const row = await svc.app.db('qr_codes').where({ ulid: code.ulid }).first('id', 'org_id');
    const now = Date.now();
    const events: ScanEvent[] = [];
    for (let day = 0; day < 10; day++) {
      for (let i = 0; i <= day; i++) {
        const ms = now - day * DAY - i * 1000;
        events.push({
          scan_id: ulid(ms),
          scanned_at: ms,
          org_id: Number(row.org_id),
          brand_id: 0,
          domain_id: 0,
          code_id: Number(row.id),
          visitor_hash: String(i % 4),
          country: ['DE', 'AT', 'CH'][i % 3],
          device_type: 'mobile',
          os: 'iOS',
          browser: 'Safari',
          referrer: '',
          language: 'de',
          provider: 'Telekom',
          asn: 0,
          is_bot: 0,
          matched_rule: -1,
        });
      }
    }
    await insertScanEvents(svc.app.ch, events);
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    await svc?.close();
  });

  const app = (p: string) => `${svc.url}/app${p}`;
  const org = (p: string) => app(`/o/${orgUlid}${p}`);

  it('signs the owner in through the qrctl link after a password is set', async () => {
    owner = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 860 } });
    page = await owner.newPage();
    await page.goto(linkUrl);
    await heading(page, 'Set your password');
    await look(page, 'link');
    await setFirstPassword(page, PASSWORD);
    await heading(page, 'Acme Coffee: overview');
    const cookie = (await owner.cookies()).find((c) => c.name === 'qr_session')!;
    expect(cookie.httpOnly).to.equal(true);
    expect(cookie.sameSite).to.equal('Lax');
    // The link worked once.
    const again = await browser.newPage();
    await again.goto(linkUrl);
    await heading(again, 'Link not usable');
    await again.close();
  });

  it('draws the overview chart from seeded scans and lists the top codes', async () => {
    await page.goto(org('/overview'));
    await heading(page, 'Acme Coffee: overview');
    const chart = page.getByTestId('scans-chart');
    await chart.locator('canvas').waitFor();
    expect(await chart.getAttribute('aria-label')).to.match(/55 scans in 30 days/);
    await page.getByRole('link', { name: 'Spring menu' }).waitFor();
    await look(page, 'overview');
  });

  it('creates a code with the form and finds it with the server-side search', async () => {
    await page.goto(org('/codes'));
    await heading(page, 'Codes');
    await page.getByRole('link', { name: 'New code' }).click();
    await heading(page, 'New code');
    await look(page, 'code-new');
    await page.getByLabel('Name', { exact: true }).fill('Autumn poster');
    await page.getByLabel('Slug').fill('autumn');
    await page.getByLabel('Destination URL', { exact: true }).fill('https://acme.example/autumn');
    await page.getByLabel('utm_campaign').fill('autumn');
    await page.getByRole('button', { name: 'Add a rule' }).click();
    await page.getByLabel('Rule 1: countries').fill('AT');
    await page.getByLabel('Rule 1: destination URL').fill('https://acme.example/at');
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'Autumn poster');
    await look(page, 'code-edit');
    const created = (await svc.get('/v1/qr-codes?search=autumn&limit=5', token)).body.data;
    expect(created).to.have.length(1);
    expect(created[0].routing.rules[0]).to.deep.equal({
      conditions: { country: ['AT'] },
      destination: 'https://acme.example/at',
    });
    expect(created[0].utm_params).to.deep.equal({ utm_campaign: 'autumn' });

    await page.goto(org('/codes'));
    await page.getByLabel('Search').fill('autum');
    await page.getByRole('caption').filter({ hasText: 'Codes matching “autum”' }).waitFor();
    // The caption follows the search term at once; the rows follow when the search answers.
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 1, null, { timeout: 10_000 });
    expect(await page.locator('tbody tr').count()).to.equal(1);
    await look(page, 'codes');
  });

  it('pauses a code after confirmation', async () => {
    await page.goto(org(`/codes/${seededCode}`));
    await heading(page, 'Spring menu');
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Pause' }).click();
    await page.getByText('The code is paused now.').waitFor();
    expect((await svc.get(`/v1/qr-codes/${seededCode}`, token)).body.data.status).to.equal('paused');
  });

  it('shows a code’s analytics and downloads them as CSV', async () => {
    await page.goto(org(`/codes/${seededCode}/analytics`));
    await heading(page, 'Analytics: Spring menu');
    await page.getByTestId('scans-chart').locator('canvas').waitFor();
    await page.getByRole('cell', { name: 'Germany' }).waitFor();
    await look(page, 'code-analytics');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    expect(csv.split('\n')[0]).to.equal('date,country,scans,conversions');
    expect(csv).to.contain('Germany');
  });

  it('creates a token whose secret appears once and works on the REST API', async () => {
    await page.goto(org('/tokens'));
    await heading(page, 'API tokens');
    await page.getByLabel('Token name').fill('reporting');
    await page.getByLabel('codes.view').check();
    await page.getByLabel('analytics.view').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('token-secret').textContent())!;
    expect(secret).to.match(/^\d+\|[A-Za-z0-9]{40,}$/);
    await look(page, 'tokens');
    expect((await svc.get('/v1/qr-codes?limit=1', secret)).status).to.equal(200);
    expect((await svc.get('/v1/brands', secret)).status).to.equal(403);
    await page.reload();
    await page.getByRole('cell', { name: 'reporting', exact: true }).waitFor();
    expect(await page.getByTestId('token-secret').count()).to.equal(0);
  });

  it('records a staff top-up that the owner then sees in the wallet ledger', async () => {
    const staffUser = await qrctl(svc.app, ['user', 'staff', '--email', 'finance@platform.example']);
    const staff = await browser.newContext();
    const sp = await staff.newPage();
    await sp.goto(staffUser.sign_in_link);
    await setFirstPassword(sp, PASSWORD);
    await heading(sp, 'Staff: wallet top-ups');
    await sp.getByLabel('Find an organization').fill('acme');
    await sp.getByLabel('Amount for Acme Coffee (EUR)').fill('120.50');
    await sp.getByLabel('Reference for Acme Coffee').fill('INV-2031');
    await sp.getByRole('button', { name: 'Record top-up for Acme Coffee' }).click();
    await sp.getByRole('dialog').getByRole('button', { name: 'Record top-up' }).click();
    await sp.getByText('Credited 120.50 EUR to Acme Coffee; the balance is 120.50.').waitFor();
    await look(sp, 'staff');
    await staff.close();

    await page.goto(org('/wallet'));
    await heading(page, 'Wallet');
    const row = page.locator('tbody tr').first();
    expect(await row.locator('td').nth(1).textContent()).to.equal('credit');
    expect(await row.locator('td').nth(2).textContent()).to.equal('top-up');
    expect(await row.locator('td').nth(3).textContent()).to.equal('120.50');
    await page.getByLabel('Low-balance threshold (EUR)').fill('500');
    await page.getByRole('button', { name: 'Save threshold' }).click();
    await page.getByRole('alert').filter({ hasText: 'below the low-balance threshold' }).waitFor();
    await look(page, 'wallet');
  });

  it('imports a CSV with one bad row: shows the row error, confirms the rest and follows the progress', async () => {
    await page.goto(org('/imports'));
    await heading(page, 'Bulk import');
    const csv = [
      'slug,destination,name',
      'table-1,https://acme.example/t/1,Table 1',
      'table-2,not a url,Table 2',
      'table-3,https://acme.example/t/3,Table 3',
    ].join('\n');
    await page.getByLabel('CSV file', { exact: true }).setInputFiles(tmpFile('tables.csv', csv));
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByText('3 rows read: 2 can be created, 1 has errors and will be skipped.').waitFor();
    const errorRow = page.getByRole('table', { name: /Rows with errors/ }).locator('tbody tr');
    expect(await errorRow.count()).to.equal(1);
    expect(await errorRow.locator('td').first().textContent()).to.equal('3');
    await look(page, 'imports');
    await page.getByRole('button', { name: 'Import 2 codes' }).click();
    await page
      .getByText(/Import completed( with errors)?: 2 created, 0 failed, 1 skipped/)
      .waitFor({ timeout: 60_000 });
    expect(await page.locator('#import-progress').getAttribute('value')).to.equal('100');
    expect((await svc.get('/v1/qr-codes?search=table-&limit=10', token)).body.data).to.have.length(2);
  });

  it('shows brands, domains with their DNS records, styles, members and the account page', async () => {
    await page.goto(org('/brands'));
    await page.getByLabel('Brand name').fill('Acme Roasters');
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.getByRole('cell', { name: 'Acme Roasters', exact: true }).waitFor();
    await look(page, 'brands');

    await page.goto(org('/domains'));
    await page.getByLabel('Host name').fill('qr.acme.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('table', { name: 'DNS records to publish for qr.acme.example' }).waitFor();
    await page.getByRole('button', { name: 'Copy the TXT record value' }).waitFor();
    await look(page, 'domains');

    await page.goto(org('/styles'));
    await heading(page, 'Styles');
    await look(page, 'styles');

    await page.goto(org('/members'));
    await heading(page, 'Members');
    await page.getByLabel('Email', { exact: true }).fill('viewer@acme.example');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    invitation = (await page.getByTestId('invitation-link').textContent())!;
    expect(linkSecret(invitation)).to.have.length(48);
    await look(page, 'members');

    await page.goto(app('/account'));
    await heading(page, 'Your account');
    await look(page, 'account');
  });

  it('keeps a viewer out of editing and shows another organization’s code as not found', async () => {
    const viewer = await browser.newContext();
    const vp = await viewer.newPage();
    await vp.goto(invitation);
    await heading(vp, 'Join Acme Coffee');
    await setFirstPassword(vp, PASSWORD, 'Join');
    await heading(vp, 'Acme Coffee: overview');
    const nav = vp.getByRole('navigation', { name: 'Sections' });
    expect(await nav.getByRole('link').allTextContents()).to.deep.equal([
      'Overview',
      'Codes',
      'Live',
      'Brands',
      'Domains',
    ]);
    await vp.goto(org(`/codes/${seededCode}`));
    await heading(vp, 'Spring menu');
    expect(await vp.getByRole('button', { name: 'Save changes' }).count()).to.equal(0);
    expect(await vp.getByLabel('Destination URL', { exact: true }).isDisabled()).to.equal(true);
    expect(await vp.getByRole('button', { name: 'Delete' }).count()).to.equal(0);
    await vp.goto(org('/codes/new'));
    await heading(vp, 'Not found');
    await vp.goto(org('/tokens'));
    await heading(vp, 'Not found');
    // The operations refuse what the pages do not offer.
    const refused = await vp.evaluate(async (o) => {
      const s = await (await fetch('/app/api/session')).json();
      const r = await fetch(`/app/api/orgs/${o}/v1/qr-codes`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf_token },
        body: JSON.stringify({
          slug: 'x',
          destination: 'https://x.example',
          domain_ulid: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
        }),
      });
      return { status: r.status, body: await r.json() };
    }, orgUlid);
    expect(refused.status).to.equal(403);
    expect(refused.body.required_ability).to.equal('codes.create');
    await viewer.close();

    // Another organization's code, opened by the owner of Acme: not found, in both addresses.
    const other = await svc.createOrg({ plan: 'business_monthly', slug: 'globex' });
    const domain = (await svc.get('/v1/domains', other.token)).body.data[0].ulid;
    const theirs = (
      await svc.post('/v1/qr-codes', other.token, {
        slug: 'secret',
        destination: 'https://g.example',
        domain_ulid: domain,
      })
    ).body.data;
    await page.goto(org(`/codes/${theirs.ulid}`));
    await heading(page, 'Code not found');
    await page.goto(app(`/o/${other.org.ulid}/codes/${theirs.ulid}`));
    await heading(page, 'Not found');
    await look(page, 'not-found');
    await addMember(svc.app, other.org, 'owner@acme.example', 'editor');
  });

  it('refuses a write without the CSRF token', async () => {
    const res = await page.evaluate(async (o) => {
      const r = await fetch(`/app/api/orgs/${o}/v1/brands`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Forged' }),
      });
      return { status: r.status, body: await r.json() };
    }, orgUlid);
    expect(res).to.deep.equal({
      status: 403,
      body: { message: 'The request lacks a valid CSRF token; reload the page and try again.', code: 'csrf_failed' },
    });
    expect((await svc.get('/v1/brands', token)).body.data.map((b: { name: string }) => b.name)).not.to.include(
      'Forged',
    );
  });

  it('switches organizations with the switcher', async () => {
    await page.goto(org('/codes'));
    await page.reload();
    const switcher = page.getByLabel('Organization');
    const globex = await switcher.locator('option', { hasText: /^Org \d+ \(editor\)$/ }).getAttribute('value');
    await switcher.selectOption(globex!);
    await page.waitForURL(`**/app/o/${globex}/codes`);
    await page.getByRole('cell', { name: 'secret', exact: true }).waitFor();
  });

  it('signs out, and a signed-out visitor is sent to sign in; signing in again works', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading(page, 'Sign in');
    await look(page, 'sign-in');
    await page.goto(org('/codes'));
    await heading(page, 'Sign in');
    await page.getByLabel('Email').fill('owner@acme.example');
    await page.getByLabel('Password').fill('wrong password here');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The email or password is wrong.' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Codes');
  });

  it('has no serious or critical axe-core violations on any page', () => {
    expect(Object.keys(violations)).to.include.members([
      'overview',
      'codes',
      'code-edit',
      'wallet',
      'staff',
      'sign-in',
    ]);
    const bad = Object.entries(violations).filter(([, v]) => v.length);
    expect(bad, JSON.stringify(bad, null, 1)).to.deep.equal([]);
  });

  it('serves hashed assets with a year of caching and at most 200 KB of initial JavaScript, gzipped', async () => {
    const html = await (await fetch(app('/'))).text();
    const scripts = [
      ...html.matchAll(/<script[^>]+src="([^"]+)"/g),
      ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g),
    ].map((m) => m[1]);
    expect(scripts.length).to.be.greaterThan(0);
    let gzipped = 0;
    for (const src of scripts) {
      const res = await fetch(svc.url + src, { headers: { 'Accept-Encoding': 'gzip' } });
      expect(res.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      gzipped += zlib.gzipSync(Buffer.from(await res.arrayBuffer())).length;
    }
    expect(gzipped).to.be.below(200 * 1024);
    const index = await fetch(app('/o/x/codes'));
    expect(index.headers.get('cache-control')).to.equal('no-cache');
    expect(index.headers.get('content-security-policy')).to.match(/default-src 'self'/);
  });
});
