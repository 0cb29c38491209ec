// What a code carries, in the dashboard in Debian's Chromium: the type picker, a contact card filled
// in with its landing page redrawn live in the phone frame before anything is saved, the code
// created with that destination; a static Wi-Fi code without the options it cannot use; an existing
// dynamic code that cannot turn static. The new organization's getting-started checklist, ticked off
// as its steps are done. The code list with QR thumbnails, bulk pause, resume and delete, and its CSV. axe-core on each page and a screenshot of each.
import fs from 'node:fs';
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../helpers/harness.js';
import { heading, pageChecks, signedInDashboard } from './browser.js';

describe('code types in the dashboard in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let vcardUlid: string;
  const { look, violations } = pageChecks();
  const csp: string[] = [];

  before(async function () {
    this.timeout(600_000);
    ({ svc, browser, page, orgUlid, token } = await signedInDashboard());
    page.on('console', (m) => {
      if (/Content Security Policy|Refused/i.test(m.text())) csp.push(m.text());
    });
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  const frame = () => page.frameLocator('[data-testid="landing-preview"]');
  const steps = async () =>
    page
      .getByTestId('onboarding')
      .locator('li')
      .evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-step')}:${li.getAttribute('data-done')}`));

  it('shows a new organization its first steps; the token qrctl made is already done', async () => {
    await page.getByTestId('onboarding').waitFor();
    expect(await steps()).to.deep.equal(['code:no', 'domain:no', 'style:no', 'token:yes']);
    await page.getByRole('link', { name: 'Create your first QR code' }).click();
    await heading(page, 'New code');
  });

  it('previews a contact card’s landing page live while it is typed, then creates the code', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/new`);
    await heading(page, 'New code');
    await page.getByRole('radio', { name: /Contact card/ }).check();
    await page.getByLabel('Name as shown').fill('Ada Lovelace');
    await frame().getByRole('heading', { name: 'Ada Lovelace' }).waitFor();
    await page.getByLabel('Company').fill('Analytical Engines');
    await page.getByRole('button', { name: 'Add phone' }).click();
    await page.getByLabel('Phone 1: number').fill('+44 20 7946 0000');
    await page.getByLabel('Page title (default: the content’s)').fill('Meet Ada');
    // The frame follows the form: the page's own title and the new fields appear without a save.
    await frame().getByRole('heading', { name: 'Meet Ada' }).waitFor();
    await frame().getByText('Analytical Engines').waitFor();
    await frame().getByText('+44 20 7946 0000').waitFor();
    expect((await svc.get('/v1/qr-codes', token)).body.data).to.deep.equal([]);
    await look(page, 'code-new-vcard');
    await page.getByLabel('Slug').fill('ada');
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'ada');
    const codes = (await svc.get('/v1/qr-codes', token)).body.data;
    expect(codes).to.have.length(1);
    vcardUlid = codes[0].ulid;
    const code = (await svc.get(`/v1/qr-codes/${vcardUlid}`, token)).body.data;
    expect(code.type).to.equal('vcard');
    expect(code.destination).to.deep.include({ name: 'Ada Lovelace', organization: 'Analytical Engines' });
    expect(code.destination.phones).to.deep.equal([{ number: '+44 20 7946 0000', type: 'cell' }]);
    expect(code.landing_config).to.deep.equal({ title: 'Meet Ada' });
  });

  it('shows the service’s messages beside the fields of an invalid destination', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/new`);
    await heading(page, 'New code');
    await page.getByRole('radio', { name: /Event/ }).check();
    await page.getByLabel('Event title').fill('Launch');
    await page.getByLabel('Starts').fill('2027-05-01T18:00');
    await page.getByLabel('Ends').fill('2027-05-01T17:00');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    // The frame says what keeps the page from being drawn.
    await frame().getByText('destination.end').waitFor();
    await page.getByLabel('Slug').fill('launch');
    await page.getByRole('button', { name: 'Create code' }).click();
    await page.getByText('Must be after start.').first().waitFor();
    expect((await svc.get('/v1/qr-codes', token)).body.data).to.have.length(1);
  });

  it('creates a static Wi-Fi code without the options a static code cannot use', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/new`);
    await heading(page, 'New code');
    await page.getByRole('radio', { name: /Wi-Fi/ }).check();
    expect(await page.getByRole('group', { name: 'Limits and access' }).count()).to.equal(0);
    expect(await page.getByRole('group', { name: 'Routing rules' }).count()).to.equal(0);
    expect(await page.getByTestId('landing-preview').count()).to.equal(0);
    await page.getByLabel('Network name (SSID)').fill('Café; guests');
    await page.getByLabel('Password', { exact: true }).fill('espresso42');
    await page.getByLabel('Slug').fill('wifi');
    await look(page, 'code-new-wifi');
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'wifi');
    const wifi = (await svc.get('/v1/qr-codes', token)).body.data.find((c: { type: string }) => c.type === 'wifi');
    expect(wifi.destination).to.deep.include({ ssid: 'Café; guests', password: 'espresso42' });
    expect(wifi.trackable).to.equal(false);
  });

  it('lets an existing dynamic code change to another dynamic type only', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes/${vcardUlid}`);
    await heading(page, 'ada');
    expect(await page.getByRole('radio', { name: /Contact card/ }).isChecked()).to.equal(true);
    expect(await page.getByLabel('Name as shown').inputValue()).to.equal('Ada Lovelace');
    expect(await page.getByRole('radio', { name: /Wi-Fi/ }).isDisabled()).to.equal(true);
    expect(await page.getByRole('radio', { name: /List of links/ }).isDisabled()).to.equal(false);
    await frame().getByRole('heading', { name: 'Meet Ada' }).waitFor();
    await look(page, 'code-edit-vcard');
  });

  it('ticks off the first code on the checklist', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/overview`);
    await page.getByTestId('onboarding').waitFor();
    expect(await steps()).to.deep.equal(['code:yes', 'domain:no', 'style:no', 'token:yes']);
    await look(page, 'overview-onboarding');
  });

  it('lists the codes with their QR codes, pauses, resumes and deletes a selection, and downloads the CSV', async () => {
    await page.goto(`${svc.url}/app/o/${orgUlid}/codes`);
    await heading(page, 'Codes');
    await page.getByTestId('code-thumb').nth(1).waitFor();
    await look(page, 'codes-list');
    const status = async (slug: string) =>
      (await svc.get('/v1/qr-codes', token)).body.data.find((c: { slug: string }) => c.slug.endsWith(`/${slug}`))
        ?.status;
    await page.getByLabel('Select every code on this page').check();
    await page.getByRole('button', { name: 'Pause', exact: true }).click();
    await page.getByText('2 codes paused.').waitFor();
    expect([await status('ada'), await status('wifi')]).to.deep.equal(['paused', 'paused']);
    await page.getByLabel('Select acme/ada').check();
    await page.getByRole('button', { name: 'Resume', exact: true }).click();
    await page.getByText('1 code resumed.').waitFor();
    expect([await status('ada'), await status('wifi')]).to.deep.equal(['active', 'paused']);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const rows = parse(fs.readFileSync(await (await download).path()), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.slug, r.type, r.status, r.destination])).to.deep.equal([
      ['wifi', 'wifi', 'paused', 'Café; guests'],
      ['ada', 'vcard', 'active', 'Ada Lovelace'],
    ]);

    await page.getByLabel('Select acme/wifi').check();
    await page.getByRole('button', { name: 'Delete selected' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('1 code deleted.').waitFor();
    expect(await status('wifi')).to.equal(undefined);
  });

  it('has no serious or critical axe-core violations and no policy reports on these pages', () => {
    expect(Object.keys(violations)).to.include.members([
      'code-new-vcard',
      'code-new-wifi',
      'code-edit-vcard',
      'overview-onboarding',
      'codes-list',
    ]);
    for (const [name, found] of Object.entries(violations)) expect(found, name).to.deep.equal([]);
    expect(csp).to.deep.equal([]);
  });
});
