// The Imports view (imports from another link service, /v1/imports) in Debian's Chromium, against
// a Shlink server on loopback (test/helpers/source-servers.ts): an import started with its options,
// its preview (clashes, a redirect rule with no equivalent), confirmed, its progress followed to
// the end with the same counts as the API; a source that refuses the key shown as an error; a
// failure midway resumed with the credentials given again; Bitly's CSV export uploaded as a file
// and its report of the link that failed. axe-core on each state and screenshots for
// docs/dashboard.md.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../helpers/harness.js';
import { runJobs } from '../helpers/jobs.js';
import { ShlinkServer, type ShlinkUrl } from '../helpers/source-servers.js';
import { heading, pageChecks, signedInDashboard, tmpFile } from './browser.js';

const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1';

function visits(n: number, daysAgo: number): ShlinkUrl['visits'] {
  return Array.from({ length: n }, (_, i) => ({
    date: new Date(Date.now() - daysAgo * DAY + i * 60_000).toISOString(),
    referer: i % 2 ? 'https://news.example/' : '',
    userAgent: UA,
    countryCode: i % 2 ? 'DE' : 'FR',
  }));
}

describe('the Imports view (link services) in a real browser', function () {
  this.timeout(180_000);
  let svc: TestService;
  let shlink: ShlinkServer;
  let browser: Browser;
  let page: Page;
  let token: string;
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    shlink = await ShlinkServer.start();
    shlink.urls = [
      {
        shortCode: 'spring',
        longUrl: 'https://acme.example/spring',
        dateCreated: new Date(Date.now() - 30 * DAY).toISOString(),
        domain: null,
        title: 'Spring menu',
        rules: [
          {
            longUrl: 'https://acme.example/q',
            priority: 1,
            conditions: [{ type: 'query-param', matchKey: 'table', matchValue: '7' }],
          },
        ],
        visits: visits(30, 20),
      },
      {
        shortCode: 'menu',
        longUrl: 'https://acme.example/menu',
        dateCreated: new Date(Date.now() - 25 * DAY).toISOString(),
        domain: null,
        visits: visits(12, 10),
      },
      {
        shortCode: 'flyer',
        longUrl: 'https://acme.example/flyer',
        dateCreated: new Date(Date.now() - 20 * DAY).toISOString(),
        domain: null,
        visits: [],
      },
    ];
    ({ svc, browser, page, token } = await signedInDashboard({
      service: { config: { importAllowPrivateSources: true, importMaxRetryAfterSeconds: 2 } },
    }));
    // A code already holds the slug menu: the import renames the Shlink link.
    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const taken = await svc.post('/v1/qr-codes', token, {
      slug: 'menu',
      destination: 'https://acme.example/',
      domain_ulid: domain,
    });
    expect(taken.status, taken.text).to.equal(201);
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
    await shlink?.close();
  });

  const imports = async () => (await svc.get('/v1/imports', token)).body.data;
  const card = (n = 0) => page.getByTestId('import').nth(n);

  /** Confirms the previewed import on the page and, once the service has queued it, runs its job. */
  async function confirmAndRun() {
    await card()
      .getByRole('button', { name: /^Import \d+ new links$/ })
      .click();
    await card().locator('.badge.queued').waitFor();
    await runJobs(svc.app);
  }

  async function startShlink(apiKey: string) {
    await page.getByLabel('Source', { exact: true }).selectOption('shlink');
    await page.getByLabel('Source address').fill(shlink.url);
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Read the source' }).click();
    await page.getByRole('status').filter({ hasText: 'nothing is imported until you confirm' }).waitFor();
    await runJobs(svc.app);
  }

  it('starts a Shlink import with its options, previews clashes and unmappable rules, and follows it to the end', async () => {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Import from a service' })
      .click();
    await heading(page, 'Import from a link service');
    await page.getByLabel('Orphan visits too').check();
    await page.getByLabel('When a slug is taken').selectOption('rename');
    await startShlink(shlink.apiKey);
    const [started] = await imports();
    expect(started).to.deep.include({ source: 'shlink', status: 'staged' });
    expect(started.options).to.deep.include({ orphan_visits: true, on_clash: 'rename', history: true });
    expect(shlink.requests.every((r) => r.headers['x-api-key'] === shlink.apiKey)).to.equal(true);

    // The preview (the page polls until the staged import shows).
    const preview = card().getByRole('status');
    await preview.filter({ hasText: '4 links read' }).waitFor();
    expect(await preview.innerText()).to.contain('1 slug clashes (1 renamed)');
    const clashes = card().locator('table', { has: page.locator('caption', { hasText: 'Slug clashes' }) });
    expect(await clashes.locator('tbody tr').first().innerText()).to.match(/menu[\s\S]*menu-2/);
    const unmappable = card().locator('table', {
      has: page.locator('caption', { hasText: 'Fields with no equivalent here' }),
    });
    expect(await unmappable.innerText()).to.match(/spring[\s\S]*query-param table=7/);
    await look(page, 'link-imports-preview');

    await confirmAndRun();
    await card().locator('.badge.completed').waitFor();
    const [done] = await imports();
    expect(done.status).to.equal('completed');
    expect(done.progress).to.deep.include({ links_created: 4, links_renamed: 1, scans_done: 42, percent: 100 });
    const counts = await card().getByTestId('import-counts').innerText();
    expect(counts).to.contain('Links: 4 of 4 (4 created, 0 matched, 1 renamed, 0 skipped, 0 failed)');
    expect(counts).to.contain('Scans: 42 of 42');
    expect(
      await card()
        .getByLabel('100% done')
        .evaluate((p) => (p as HTMLProgressElement).value),
    ).to.equal(100);
    const codes = (await svc.get('/v1/qr-codes?search=menu', token)).body.data.map((c: { slug: string }) => c.slug);
    expect(codes).to.include.members(['acme/menu', 'acme/menu-2']);
  });

  it('shows a source that refuses the key as the import’s error', async () => {
    await startShlink('not-the-key');
    await card().locator('.badge.failed').waitFor();
    const alert = card().getByRole('alert');
    expect(await alert.innerText()).to.match(/^The import failed: .*401/);
    expect((await imports())[0].error_message).to.match(/401/);
  });

  it('resumes an import that failed midway once the credentials are given again', async () => {
    shlink.urls.push({
      shortCode: 'autumn',
      longUrl: 'https://acme.example/autumn',
      dateCreated: new Date(Date.now() - 5 * DAY).toISOString(),
      domain: null,
      visits: visits(8, 3),
    });
    await startShlink(shlink.apiKey);
    await card().getByRole('status').filter({ hasText: '5 links read' }).waitFor();
    // The autumn link's visits answer 500 once: the run stops there, resumable.
    shlink.faults.push({ match: /\/autumn\/visits/, status: 500, times: 1 });
    await confirmAndRun();
    await card().locator('.badge.failed').waitFor();
    expect(await card().getByRole('alert').innerText()).to.match(/500/);
    expect((await imports())[0].resumable).to.equal(true);
    await look(page, 'link-imports-failed');

    const resume = card().getByRole('form', { name: 'Resume the shlink import' });
    await resume.getByLabel('Source address again').fill(shlink.url);
    await resume.getByLabel('API key again').fill(shlink.apiKey);
    await resume.getByRole('button', { name: 'Resume from where it stopped' }).click();
    await card().locator('.badge.queued').waitFor();
    await runJobs(svc.app);
    await card().locator('.badge.completed').waitFor();
    const [done] = await imports();
    expect(done.progress).to.deep.include({ links_created: 1, links_matched: 4, scans_done: 8 });
  });

  it('imports Bitly’s CSV export from a file and reports the link that could not be imported', async () => {
    const created = new Date(Date.now() - 5 * DAY).toISOString().slice(0, 19).replace('T', ' ');
    const file = tmpFile(
      'bitly.csv',
      [
        'Title,Bitlink,Long URL,Custom Bitlinks,Date Created,Tags,Total Engagements,Archived',
        `Poster,https://bit.ly/poster1,https://acme.example/poster,,${created},print,17,false`,
        `Hostile,bit.ly/hostile1,javascript:alert(1),,${created},,,false`,
      ].join('\n'),
    );
    await page.getByLabel('Source', { exact: true }).selectOption('bitly');
    await page.getByLabel('Read from').selectOption('file');
    expect(await page.getByLabel('API token').count()).to.equal(0);
    await page.getByLabel('Bitly CSV export').setInputFiles(file);
    await page.getByRole('button', { name: 'Read the source' }).click();
    await page.getByRole('status').filter({ hasText: 'nothing is imported until you confirm' }).waitFor();
    await runJobs(svc.app);
    await card().getByRole('status').filter({ hasText: '2 links read' }).waitFor();
    await confirmAndRun();
    await card().locator('.badge.completed_with_errors').waitFor();
    await card().getByRole('button', { name: 'Show the report' }).click();
    const report = card().locator('table', { has: page.locator('caption', { hasText: 'Links that lost' }) });
    await report.waitFor();
    expect(await report.locator('tbody').innerText()).to.match(/hostile1[\s\S]*failed/);
    const [done] = await imports();
    expect(done).to.deep.include({ source: 'bitly', status: 'completed_with_errors' });
    expect(done.progress).to.deep.include({ links_created: 1, links_failed: 1, scans_done: 17 });
    await look(page, 'link-imports');
  });

  it('has no serious or critical axe-core violations', () => {
    expect(Object.keys(violations)).to.include.members(['link-imports', 'link-imports-preview', 'link-imports-failed']);
    for (const [name, found] of Object.entries(violations)) expect(found, name).to.deep.equal([]);
  });
});
