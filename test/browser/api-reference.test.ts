// The API reference at /docs in Debian's Chromium: the project's own OpenAPI document drawn by the
// reference viewer from the service's own files (no request leaves for another host), under the
// page's policy (no violation reported), with every operation listed and no serious or critical
// axe-core violation. A screenshot goes to the test output.
import path from 'node:path';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { startTestService, type TestService } from '../helpers/harness.js';
import { launchBrowser, outputDir, seriousViolations } from './browser.js';

describe('the API reference at /docs in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;

  before(async function () {
    this.timeout(600_000);
    svc = await startTestService();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('draws every operation of the OpenAPI document from the service’s own files', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const reports: string[] = [];
    const outside: string[] = [];
    page.on('console', (m) => {
      if (process.env.DEBUG_REFERENCE) console.log(m.text());
      if (/Content Security Policy|Refused/i.test(m.text())) reports.push(m.text());
    });
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith('data:')) outside.push(r.url());
    });
    const res = await page.goto(`${svc.url}/docs`);
    expect(res?.headers()['content-security-policy']).to.contain("script-src 'self'");
    await page.locator('.opblock').first().waitFor();
    const doc = (await svc.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
    expect(await page.locator('.opblock').count()).to.equal(operations);
    await page.getByText('/v1/qr-codes/{code_ulid}', { exact: true }).first().waitFor();
    await page.screenshot({ path: path.join(outputDir(), 'api-reference.png') });
    expect(await seriousViolations(page)).to.deep.equal([]);
    expect(reports).to.deep.equal([]);
    expect(outside).to.deep.equal([]);
  });
});
