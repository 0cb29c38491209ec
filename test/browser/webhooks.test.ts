// The webhooks page in Debian's Chromium: an endpoint added with its events, its signing secret
// shown once (and checked by the standardwebhooks library on a real delivery to a loopback
// receiver), the delivery log with status, response and latency, a manual redelivery, secret
// rotation, pausing. axe-core on the page and a screenshot of it.
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { TestService } from '../helpers/harness.js';
import { runJobs } from '../helpers/jobs.js';
import { verified, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { heading, pageChecks, signedInDashboard } from './browser.js';

describe('the webhooks page in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let receiver: WebhookReceiver;
  let browser: Browser;
  let page: Page;
  let token: string;
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    receiver = await WebhookReceiver.start();
    ({ svc, browser, page, token } = await signedInDashboard({
      service: { config: { webhookAllowedTargets: ['127.0.0.1/32'] } },
    }));
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
    await receiver?.close();
  });

  it('adds an endpoint, shows its secret once, and logs a signed delivery with its status and latency', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click();
    await heading(page, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill(receiver.url());
    await page.getByLabel(/^code\.deleted/).uncheck();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.getByTestId('webhook-secret').innerText()).trim();
    expect(secret).to.match(/^whsec_/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByTestId('webhook-secret').count()).to.equal(0);
    const hooks = (await svc.get('/v1/webhooks', token)).body.data;
    expect(hooks.map((h: { events: string[] }) => h.events)).to.deep.equal([['code.created', 'code.updated']]);

    const domain = (await svc.get('/v1/domains', token)).body.data[0].ulid;
    const code = await svc.post('/v1/qr-codes', token, {
      slug: 'hooked',
      destination: 'https://example.com/',
      domain_ulid: domain,
    });
    expect(code.status).to.equal(201);
    await runJobs(svc.app);
    const [got] = await receiver.waitFor(1);
    expect(verified(secret, got).type).to.equal('code.created');

    await page.getByRole('button', { name: `Deliveries to ${receiver.url()}` }).click();
    const row = page.locator('tr[data-status="succeeded"]');
    await row.waitFor();
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).to.contain('code.created');
    expect(cells[2]).to.equal('1');
    expect(cells[3]).to.equal('200');
    expect(cells[4]).to.match(/^\d+ ms$/);
    await look(page, 'webhooks');
  });

  it('redelivers a delivery by hand, rotates the secret and pauses the endpoint', async () => {
    // The click only sends the request: the job is queued once the service has answered it.
    const queued = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/redeliver'));
    await page.getByRole('button', { name: /^Redeliver code\.created/ }).click();
    expect((await queued).status()).to.equal(202);
    await runJobs(svc.app);
    await receiver.waitFor(2);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('tr[data-status="succeeded"] td:nth-child(3)', { hasText: '2' }).waitFor();

    await page.getByRole('button', { name: `Rotate the secret of ${receiver.url()}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = (await page.getByTestId('webhook-secret').innerText()).trim();
    expect(rotated).to.match(/^whsec_/);

    await page.getByRole('button', { name: `Pause ${receiver.url()}` }).click();
    await page.getByTestId('webhook-state').getByText('Paused').waitFor();
    expect((await svc.get('/v1/webhooks', token)).body.data[0].enabled).to.equal(false);
  });

  it('has no serious or critical axe-core violations', () => {
    expect(Object.keys(violations)).to.include('webhooks');
    for (const [name, found] of Object.entries(violations)) expect(found, name).to.deep.equal([]);
  });
});
