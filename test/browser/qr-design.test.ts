// The QR code in the dashboard, in Debian's Chromium: a new code shows its rendered preview, its
// PNG download decodes (ZXing, as the rendering tests) to the code's public URL, SVG and PDF come through the web adapter
// as files; the style designer previews every change with its scannability verdict, saves a good
// style and refuses a low-contrast one with its reasons, edits and deletes. axe-core on each page
// and a screenshot of each under the test output.
import fs from 'node:fs';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadDashboard } from '../../server/web/assets.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { createAcme, heading, launchBrowser, pageChecks, setFirstPassword, tmpFile } from './browser.js';

const PASSWORD = 'a long enough password';

describe('QR codes and the style designer in a real browser', function () {
  this.timeout(120_000);
  let svc: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let orgUlid: string;
  let token: string;
  let codeUlid: string;
  let publicUrl: string;
  let styleUlid: string;
  const { look, violations } = pageChecks();

  before(async function () {
    this.timeout(600_000);
    if (!loadDashboard()) throw new Error('dashboard/dist is missing: run make dashboard (make test does)');
    svc = await startTestService();
    browser = await launchBrowser();
    const created = await createAcme(svc.app);
    orgUlid = created.organization.ulid;
    token = created.token;
    context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.goto(created.sign_in_link);
    await setFirstPassword(page, PASSWORD);
    await heading(page, 'Acme Coffee: overview');
  });

  after(async () => {
    await browser?.close();
    await svc?.close();
  });

  const org = (p: string) => `${svc.url}/app/o/${orgUlid}${p}`;

  /**
   * A style's save runs the full verdict in a render thread at the lowest priority (and measures its
   * logo): on a busy machine its answer takes as long as a settled preview's.
   */
  const SAVE_WAIT = 90_000;

  /** The verdict the designer shows once its preview has settled. */
  async function settledVerdict(p: Page, verdict: string): Promise<void> {
    const settled = p.locator('[data-testid="scannability"], [data-testid="preview-error"]').first();
    // The full verdict reads phone-like captures with three decoders: on a busy machine it takes a while.
    await settled.waitFor({ timeout: 90_000 });
    const preview = await p.getByRole('complementary', { name: 'Preview' }).innerText();
    expect(await settled.getAttribute('data-verdict'), preview).to.equal(verdict);
  }

  it('draws a new code’s QR code while the form is filled in, then shows the created code’s', async function () {
    this.timeout(300_000);
    await page.goto(org('/codes/new'));
    await heading(page, 'New code');
    const aside = page.getByRole('complementary', { name: 'QR code' });
    await aside.getByText('Type a slug to see the QR code.').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Table tents');
    await page.getByLabel('Slug').fill('tables');
    // Before anything is saved: the symbol of the would-be public URL, decoded by ZXing from the page.
    const draft = page.getByTestId('draft-image');
    // The first render starts the render threads: slow on a busy machine.
    await draft.waitFor({ timeout: 90_000 });
    const shownUrl = await page.getByTestId('draft-public-url').innerText();
    expect(shownUrl).to.match(/\/acme\/tables$/);
    expect(await decodeQr(await draft.screenshot())).to.equal(shownUrl);
    // The URL may wrap only after its slashes: a <wbr> after each.
    const html = await page.getByTestId('draft-public-url').innerHTML();
    expect(html)
      .to.include('<wbr>')
      .and.not.to.match(/\/(?!\/|<wbr>)/);
    expect(await svc.get('/v1/qr-codes', token).then((r) => r.body.data.length)).to.equal(0);
    await look(page, 'code-new-preview');
    await page.getByLabel('Destination URL', { exact: true }).fill('https://acme.example/menu');
    await page.getByRole('button', { name: 'Create code' }).click();
    await heading(page, 'Table tents');
    codeUlid = page.url().split('/').pop()!;
    publicUrl = (await svc.get(`/v1/qr-codes/${codeUlid}`, token)).body.data.public_url;
    expect(publicUrl).to.equal(shownUrl);
    const img = page.getByTestId('code-image');
    await img.waitFor();
    expect(await img.getAttribute('alt')).to.equal(`QR code for ${publicUrl}`);
    // The preview is drawn (an SVG of real size), not a broken image.
    expect(await img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).to.equal(true);
    await look(page, 'code-preview');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download PNG' }).click(),
    ]);
    expect(download.suggestedFilename()).to.equal('tables.png');
    const png = fs.readFileSync((await download.path())!);
    expect(png.subarray(1, 4).toString()).to.equal('PNG');
    expect(await decodeQr(png)).to.equal(publicUrl);
  });

  it('downloads SVG and PDF through the web adapter with the session', async () => {
    const [svgDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download SVG' }).click(),
    ]);
    expect(svgDownload.suggestedFilename()).to.equal('tables.svg');
    expect(fs.readFileSync((await svgDownload.path())!, 'utf8')).to.match(/^(<\?xml[^>]*>\s*)?<svg/);
    const [pdfDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download PDF' }).click(),
    ]);
    expect(pdfDownload.suggestedFilename()).to.equal('tables.pdf');
    expect(
      fs
        .readFileSync((await pdfDownload.path())!)
        .subarray(0, 5)
        .toString(),
    ).to.equal('%PDF-');

    // The bytes and headers pass through the adapter unchanged; no session, no image.
    const res = await context.request.get(
      `${svc.url}/app/api/orgs/${orgUlid}/v1/qr-codes/${codeUlid}/image?format=png&size=256&download=1`,
    );
    expect(res.status()).to.equal(200);
    expect(res.headers()['content-type']).to.equal('image/png');
    expect(res.headers()['content-disposition']).to.match(/attachment; filename="tables\.png"/);
    expect(await decodeQr(await res.body())).to.equal(publicUrl);
    const etag = res.headers()['etag'];
    expect(etag).to.be.a('string');
    const again = await context.request.get(
      `${svc.url}/app/api/orgs/${orgUlid}/v1/qr-codes/${codeUlid}/image?format=png&size=256&download=1`,
      { headers: { 'If-None-Match': etag } },
    );
    expect(again.status()).to.equal(304);
    const anonymous = await fetch(`${svc.url}/app/api/orgs/${orgUlid}/v1/qr-codes/${codeUlid}/image`);
    expect(anonymous.status).to.equal(401);
  });

  it('redraws the preview with the style chosen in the form, and saves it', async () => {
    const style = (
      await svc.post('/v1/qr-styles', token, {
        name: 'Espresso',
        config: { dotsOptions: { type: 'rounded', color: '#1e3a8a' }, cornersSquareOptions: { type: 'extra-rounded' } },
      })
    ).body.data;
    await page.goto(org(`/codes/${codeUlid}`));
    await heading(page, 'Table tents');
    const img = page.getByTestId('code-image');
    await img.waitFor();
    const before = await img.getAttribute('src');
    await page.getByLabel('Style', { exact: true }).selectOption(style.ulid);
    await page.getByText('The preview shows the chosen style; save to keep it.').waitFor();
    await page.getByTestId('scannability').filter({ hasText: 'Style Espresso' }).waitFor();
    await page.waitForFunction(
      (src) => document.querySelector('[data-testid="code-image"]')?.getAttribute('src') !== src,
      before,
    );
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await svc.get(`/v1/qr-codes/${codeUlid}`, token)).body.data.style.ulid).to.equal(style.ulid);
    await look(page, 'code-preview-styled');
  });

  it('designs a style with a live preview and its verdict, and saves it', async function () {
    this.timeout(400_000);
    await page.goto(org('/styles'));
    await heading(page, 'Styles');
    await page.getByRole('link', { name: 'New style' }).click();
    await heading(page, 'New style');
    await settledVerdict(page, 'pass');
    await page.getByLabel('Style name', { exact: true }).fill('Roastery blue');
    // Shapes are chosen from thumbnails the service drew: radio groups, each picture a real image.
    const dotShapes = page.getByRole('group', { name: 'Dot shape', exact: true });
    expect(await dotShapes.getByRole('radio').count()).to.equal(6);
    await dotShapes.getByRole('radio', { name: 'rounded', exact: true }).check();
    await page
      .getByRole('group', { name: 'Corner square shape', exact: true })
      .getByRole('radio', { name: 'extra-rounded' })
      .check();
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll<HTMLImageElement>('.shape-picker img.thumb')].every(
          (i) => i.complete && i.naturalWidth > 0,
        ) && document.querySelectorAll('.shape-picker img.thumb').length === 11,
      undefined,
      // One thumbnail at a time after the design's own preview: slow on a busy machine.
      { timeout: 150_000 },
    );
    await page.getByLabel('Dots: fill', { exact: true }).selectOption('linear');
    await page.getByLabel('Dots: colour 1', { exact: true }).fill('#1e3a8a');
    await page.getByLabel('Dots: colour 2', { exact: true }).fill('#111827');
    await page.getByLabel('Error correction', { exact: true }).selectOption('H');
    const logo =
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5" fill="#b45309"/></svg>';
    await page.getByLabel(/Logo file/).setInputFiles(tmpFile('logo.svg', logo));
    await page.getByRole('button', { name: 'Remove the logo' }).waitFor();
    await page.getByLabel(/Logo size/).fill('0.3');
    await page.getByLabel('Frame', { exact: true }).selectOption('banner');
    // The frame's colour fields hold the colours drawn (the renderer's defaults, written out).
    expect(await page.getByLabel('Frame colour', { exact: true }).inputValue()).to.equal('#000000');
    expect(await page.getByLabel('Frame text colour', { exact: true }).inputValue()).to.equal('#ffffff');
    expect(await page.getByLabel('Frame text colour picker').inputValue()).to.equal('#ffffff');
    await page.getByLabel('Frame text', { exact: true }).fill('Scan for the menu');
    await settledVerdict(page, 'pass');
    await page
      .getByTestId('logo-share')
      .filter({ hasText: /covers \d+(\.\d)? % of the symbol/ })
      .waitFor();
    await page.getByTestId('style-preview').waitFor();
    await look(page, 'style-designer');
    await page.getByRole('button', { name: 'Create style' }).click();
    await heading(page, 'Style: Roastery blue', SAVE_WAIT);
    styleUlid = page.url().split('/').pop()!.split('?')[0];
    const saved = (await svc.get(`/v1/qr-styles/${styleUlid}`, token)).body.data;
    expect(saved.config.dotsOptions).to.deep.include({ type: 'rounded' });
    expect(saved.config.dotsOptions.gradient.colorStops.map((s: { color: string }) => s.color)).to.deep.equal([
      '#1e3a8a',
      '#111827',
    ]);
    expect(saved.config.image).to.match(/^data:image\/svg\+xml;base64,/);
    expect(saved.config.frame).to.deep.include({ style: 'banner', text: 'Scan for the menu' });
    expect(saved.scannability.verdict).to.equal('pass');
    // The logo's size is shown as the share of the symbol it covers, as the service measured it.
    await settledVerdict(page, 'pass');
    const share = `${Math.round(saved.scannability.logo_area * 1000) / 10} %`;
    expect(saved.scannability.logo_area).to.be.greaterThan(0);
    expect(await page.getByTestId('logo-share').innerText()).to.contain(`covers ${share} of the symbol`);
  });

  it('offers ready presets that each scan well by the service’s full verdict', async function () {
    // One style saved (and fully checked) per preset.
    this.timeout(600_000);
    await page.goto(org('/styles/new'));
    await heading(page, 'New style');
    const gallery = () => page.getByRole('group', { name: 'Start from a preset' });
    const names = (await gallery().getByRole('button').allInnerTexts()).map((n) => n.trim());
    expect(names.length).to.be.within(4, 8);
    for (const [i, name] of names.entries()) {
      if (i) {
        await page.goto(org('/styles/new'));
        await heading(page, 'New style');
      }
      await gallery().getByRole('button', { name, exact: true }).click();
      if (i === names.length - 1) {
        await settledVerdict(page, 'pass');
        await look(page, 'style-presets');
      }
      await page.getByLabel('Style name', { exact: true }).fill(`Preset ${name}`);
      await page.getByRole('button', { name: 'Create style' }).click();
      await heading(page, `Style: Preset ${name}`, SAVE_WAIT);
      const saved = (await svc.get(`/v1/qr-styles/${page.url().split('/').pop()!.split('?')[0]}`, token)).body.data;
      // Saving ran the full check (every decoder family on phone-like captures): it passes.
      expect(saved.scannability, name).to.deep.include({ verdict: 'pass', check: 'full', reasons: [] });
      // The saved style's shapes are the ones the radio groups show as chosen.
      const chosen = page.getByRole('group', { name: 'Dot shape', exact: true }).getByRole('radio', { checked: true });
      expect(await chosen.getAttribute('value')).to.equal(saved.config.dotsOptions.type);
    }
  });

  it('offers the brand kit’s colours first, as brand references', async () => {
    const brand = (
      await svc.post('/v1/brands', token, {
        name: 'Roastery',
        brand_kit: { colors: { primary: '#7c2d12', accent: '#0f766e' } },
      })
    ).body.data;
    await page.goto(org('/styles/new'));
    await heading(page, 'New style');
    await page.getByLabel('Brand', { exact: true }).selectOption(brand.ulid);
    const swatches = page.getByRole('group', { name: 'Dots colour: palette', exact: true }).getByRole('button');
    const labels = await swatches.evaluateAll((b) => b.map((e) => e.getAttribute('aria-label')));
    expect(labels.slice(0, 2)).to.have.members(['Brand primary (#7c2d12)', 'Brand accent (#0f766e)']);
    await page
      .getByRole('group', { name: 'Dots colour: palette', exact: true })
      .getByRole('button', { name: 'Brand primary (#7c2d12)' })
      .click();
    expect(await page.getByLabel('Dots colour', { exact: true }).inputValue()).to.equal('brand:primary');
    // The picker shows the kit's colour, not black.
    expect(await page.getByLabel('Dots colour picker', { exact: true }).inputValue()).to.equal('#7c2d12');
    expect(
      await page
        .getByRole('group', { name: 'Dots colour: palette', exact: true })
        .getByRole('button', { name: 'Brand primary (#7c2d12)' })
        .getAttribute('aria-pressed'),
    ).to.equal('true');
    await settledVerdict(page, 'pass');
    await look(page, 'style-designer-brand');
  });

  it('shows a failing verdict for a low-contrast style and refuses to save it, with the reasons', async () => {
    await page.goto(org('/styles/new'));
    await heading(page, 'New style');
    await page.getByLabel('Style name', { exact: true }).fill('Too pale');
    await page.getByLabel('Dots colour', { exact: true }).fill('#d4d4d4');
    await page.getByLabel('Corner squares colour', { exact: true }).fill('#d4d4d4');
    await page.getByLabel('Corner dots colour', { exact: true }).fill('#d4d4d4');
    await settledVerdict(page, 'fail');
    const reasons = page.getByTestId('scannability').locator('li[data-reason]');
    expect(await reasons.count()).to.be.greaterThan(0);
    await page.getByText('A style that does not scan reliably cannot be saved.').waitFor();
    await page.getByRole('button', { name: 'Create style' }).click();
    const refused = page.getByTestId('refused-reasons');
    await refused.waitFor({ timeout: SAVE_WAIT });
    expect(await refused.locator('li[data-reason]').count()).to.be.greaterThan(0);
    await look(page, 'style-designer-fail');
    const names = (await svc.get('/v1/qr-styles', token)).body.data.map((s: { name: string }) => s.name);
    expect(names).not.to.include('Too pale');
  });

  it('lists the styles with their verdict', async () => {
    await page.goto(org('/styles'));
    await page.getByRole('link', { name: 'Roastery blue' }).waitFor();
    const all = (await svc.get('/v1/qr-styles', token)).body.data.length;
    expect(await page.getByRole('cell', { name: 'Scans well' }).count()).to.equal(all);
    await look(page, 'styles-verdicts');
  });

  it('edits and deletes a style', async () => {
    await page.goto(org(`/styles/${styleUlid}`));
    await heading(page, 'Style: Roastery blue');
    await settledVerdict(page, 'pass');
    await page.getByLabel('Style name', { exact: true }).fill('Roastery navy');
    await page.getByRole('button', { name: 'Save style' }).click();
    await page.getByText('Saved.').waitFor({ timeout: SAVE_WAIT });
    expect((await svc.get(`/v1/qr-styles/${styleUlid}`, token)).body.data.name).to.equal('Roastery navy');
    await page.getByRole('button', { name: 'Delete style' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete style' }).click();
    await heading(page, 'Styles');
    expect((await svc.get(`/v1/qr-styles/${styleUlid}`, token)).status).to.equal(404);
  });

  it('has no serious or critical axe-core violations on the new pages', () => {
    expect(Object.keys(violations)).to.include.members([
      'code-new-preview',
      'code-preview',
      'style-designer',
      'style-designer-fail',
      'style-presets',
      'style-designer-brand',
    ]);
    const bad = Object.entries(violations).filter(([, v]) => v.length);
    expect(bad, JSON.stringify(bad, null, 1)).to.deep.equal([]);
  });
});
