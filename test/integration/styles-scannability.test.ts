import { expect } from 'chai';
import { parseCommand, runCommand } from '../../server/cli/commands.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { costlySvgLogo, samplePngLogo } from '../helpers/sample-logo.js';

const LOGO =
  'data:image/svg+xml;base64,' +
  Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="#e53935"/></svg>',
  ).toString('base64');

describe('QR styles: scannability, preview and the stored-style check', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
  });
  after(() => svc?.close());

  const styleCount = async () => Number((await svc.app.db('qr_styles').count<{ c: number }[]>('* as c'))[0].c);

  const knownBad: [string, Record<string, unknown>, string][] = [
    [
      'contrast of 1.3:1',
      { dotsOptions: { color: '#8a8a8a' }, backgroundOptions: { color: '#9e9e9e' } },
      'low_contrast',
    ],
    ['no quiet zone', { margin: 0 }, 'quiet_zone_missing'],
  ];
  for (const [what, config, reason] of knownBad) {
    it(`refuses a style with ${what}: 422 style_not_scannable with ${reason}, nothing saved`, async () => {
      const before = await styleCount();
      const res = await svc.post('/v1/qr-styles', a.token, { name: 'Bad', config });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.code).to.equal('style_not_scannable');
      expect(res.body.reasons).to.include(reason);
      expect(res.body.scannability.verdict).to.equal('fail');
      expect(await styleCount()).to.equal(before);
    });
  }

  it('accepts qr-code-styling’s default imageSize 0.4 at level H (a coefficient of the capacity, not 40% of the area)', async () => {
    for (const imageSize of [0.4, 0.3]) {
      const res = await svc.post('/v1/qr-styles/preview', a.token, {
        config: { image: LOGO, imageOptions: { imageSize }, qrOptions: { errorCorrectionLevel: 'H' } },
      });
      expect(res.status, res.text).to.equal(200);
      const s = res.body.data.scannability;
      expect(s.verdict, JSON.stringify(s)).to.not.equal('fail');
      expect(s.logo_coverage).to.be.at.most(imageSize * 0.3);
      expect(s.logo_area).to.be.above(0).and.at.most(s.logo_coverage);
    }
  });

  it('measures the contrast on the worst gradient stop with the WCAG formula', async () => {
    const res = await svc.post('/v1/qr-styles/preview', a.token, {
      config: {
        dotsOptions: {
          gradient: {
            type: 'linear',
            colorStops: [
              { offset: 0, color: '#000000' },
              { offset: 1, color: '#8a8a8a' },
            ],
          },
        },
        backgroundOptions: { color: '#9e9e9e' },
      },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data.scannability.contrast_ratio).to.be.within(1.2, 1.4);
    expect(res.body.data.scannability.reasons).to.include('low_contrast');
  });

  it('keeps a light-on-dark style with a warning: it decodes, but not every scanner reads inverted codes', async () => {
    const res = await svc.post('/v1/qr-styles', a.token, {
      name: 'Inverted',
      config: { dotsOptions: { color: '#ffffff' }, backgroundOptions: { color: '#000000' } },
    });
    expect(res.status, res.text).to.equal(201);
    const s = res.body.data.scannability;
    expect(s).to.deep.include({
      verdict: 'warn',
      check: 'full',
      decoded: true,
      contrast_ratio: 21,
      quiet_zone_modules: 4,
      logo_coverage: 0,
      error_correction: 'Q',
    });
    // ZBar does not read light modules on dark: the warning names it, as the one that missed.
    expect(s.reasons).to.include('inverted_colors').and.include('decoder_missed_symbol');
    expect(s.misses).to.deep.include({ family: 'zbar', capture: 'ideal' });
    expect(s.misses.filter((m: { family: string }) => m.family !== 'zbar')).to.deep.equal([]);
    expect((await svc.get(`/v1/qr-styles/${res.body.data.ulid}`, a.token)).body.data.scannability.verdict).to.equal(
      'warn',
    );
  });

  it('passes a plain style and stores its measurement; a failing PATCH is refused and changes nothing', async () => {
    const res = await svc.post('/v1/qr-styles', a.token, {
      name: 'Fine',
      config: { dotsOptions: { type: 'rounded' } },
    });
    expect(res.status).to.equal(201);
    expect(res.body.data.scannability).to.include({ verdict: 'pass', decoded: true, contrast_ratio: 21 });
    expect(res.body.data.scannability.reasons).to.deep.equal([]);
    const bad = await svc.patch(`/v1/qr-styles/${res.body.data.ulid}`, a.token, { config: { margin: 0 } });
    expect(bad.status).to.equal(422);
    expect(bad.body.code).to.equal('style_not_scannable');
    const after = await svc.get(`/v1/qr-styles/${res.body.data.ulid}`, a.token);
    expect(after.body.data.config).to.deep.equal({ dotsOptions: { type: 'rounded' } });
    const narrow = await svc.patch(`/v1/qr-styles/${res.body.data.ulid}`, a.token, { config: { margin: 20 } });
    expect(narrow.status).to.equal(200);
    expect(narrow.body.data.scannability.reasons).to.deep.equal(['quiet_zone_narrow']);
  });

  it('previews SVG and PNG without saving; the PNG decodes (ZXing) to the sample text', async () => {
    const before = await styleCount();
    const svg = await svc.post('/v1/qr-styles/preview', a.token, { config: { dotsOptions: { type: 'dots' } } });
    expect(svg.status).to.equal(200);
    expect(svg.body.data).to.include({ format: 'svg', content_type: 'image/svg+xml' });
    expect(svg.body.data.image).to.match(/^<svg /);
    const png = await svc.post('/v1/qr-styles/preview', a.token, {
      config: {},
      format: 'png',
      size: 256,
      text: 'hello preview',
    });
    expect(png.body.data.content_type).to.equal('image/png');
    expect(await decodeQr(Buffer.from(png.body.data.image, 'base64'))).to.equal('hello preview');
    expect(png.body.data.scannability.verdict).to.equal('pass');
    // a failing config is answered too, for the designer to show why
    const failing = await svc.post('/v1/qr-styles/preview', a.token, { config: { margin: 0 } });
    expect(failing.status).to.equal(200);
    expect(failing.body.data.scannability.verdict).to.equal('fail');
    expect(await styleCount()).to.equal(before);
  });

  it('resolves brand-kit references with the brand given, and refuses another organization’s brand', async () => {
    const brand = (await svc.post('/v1/brands', a.token, { name: 'Kit', brand_kit: { colors: { ink: '#0d47a1' } } }))
      .body.data;
    const theirs = (await svc.post('/v1/brands', b.token, { name: 'Theirs' })).body.data;
    const config = { dotsOptions: { color: 'brand:ink' } };
    const ok = await svc.post('/v1/qr-styles/preview', a.token, { config, brand_ulid: brand.ulid });
    expect(ok.status).to.equal(200);
    expect(ok.body.data.image).to.include('#0d47a1');
    const foreign = await svc.post('/v1/qr-styles/preview', a.token, { config, brand_ulid: theirs.ulid });
    expect(foreign.status).to.equal(422);
    expect(foreign.body.errors).to.have.keys('brand_ulid');
    const noBrand = await svc.post('/v1/qr-styles', a.token, { name: 'No kit', config });
    expect(noBrand.status).to.equal(422);
    expect(noBrand.body.errors).to.have.keys('config');
    const missing = await svc.post('/v1/qr-styles', a.token, {
      name: 'Missing colour',
      brand_ulid: brand.ulid,
      config: { dotsOptions: { color: 'brand:paper' } },
    });
    expect(missing.status).to.equal(422);
    expect(missing.body.errors).to.have.keys('config.dotsOptions.color');
    const saved = await svc.post('/v1/qr-styles', a.token, { name: 'Kit style', brand_ulid: brand.ulid, config });
    expect(saved.status).to.equal(201);
    expect(saved.body.data.config).to.deep.equal(config);
  });

  it('judges the styles that use a brand kit when the kit changes: a breaking kit is refused, a good one re-measured', async () => {
    const brand = (
      await svc.post('/v1/brands', a.token, {
        name: 'Ink',
        brand_kit: { colors: { ink: '#1b1b3a', paper: '#ffffff' } },
      })
    ).body.data;
    const style = (
      await svc.post('/v1/qr-styles', a.token, {
        name: 'Ink on paper',
        brand_ulid: brand.ulid,
        config: { dotsOptions: { color: 'brand:ink' }, backgroundOptions: { color: 'brand:paper' } },
      })
    ).body.data;
    expect(style.scannability.verdict).to.equal('pass');
    const before = await svc.get(`/v1/qr-styles/${style.ulid}`, a.token);
    const kitNow = async () => (await svc.get(`/v1/brands/${brand.ulid}`, a.token)).body.data.brand_kit;

    // Grey ink on grey paper: the style would no longer scan.
    const unscannable = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, {
      brand_kit: { colors: { ink: '#8a8a8a', paper: '#9e9e9e' } },
    });
    expect(unscannable.status).to.equal(422);
    expect(unscannable.body.code).to.equal('style_not_scannable');
    expect(unscannable.body.style_ulid).to.equal(style.ulid);
    expect(unscannable.body.reasons).to.include('low_contrast');
    expect(unscannable.body.message).to.include('Ink on paper');

    // A kit without the colour the style refers to.
    const missing = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { brand_kit: { colors: { ink: '#000000' } } });
    expect(missing.status).to.equal(422);
    expect(missing.body.code).to.equal('validation_failed');
    expect(missing.body.errors.brand_kit[0]).to.include(style.ulid).and.include('config.backgroundOptions.color');

    // Neither refusal changed the kit or the style.
    expect(await kitNow()).to.deep.equal({ colors: { ink: '#1b1b3a', paper: '#ffffff' } });
    expect((await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).body).to.deep.equal(before.body);

    // Light on dark still scans: saved, and the style's stored measurement follows the kit.
    const inverted = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, {
      brand_kit: { colors: { ink: '#ffffff', paper: '#1b1b3a' } },
    });
    expect(inverted.status).to.equal(200);
    expect(await kitNow()).to.deep.equal({ colors: { ink: '#ffffff', paper: '#1b1b3a' } });
    const after = (await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).body.data;
    expect(after.scannability.verdict).to.equal('warn');
    expect(after.scannability.reasons).to.include('inverted_colors');

    // Another organization cannot reach the brand at all.
    const foreign = await svc.patch(`/v1/brands/${brand.ulid}`, b.token, { brand_kit: { colors: {} } });
    expect(foreign.status).to.equal(404);
    expect(await kitNow()).to.deep.equal({ colors: { ink: '#ffffff', paper: '#1b1b3a' } });
  });

  it('stores an SVG logo sanitised', async () => {
    const hostile =
      'data:image/svg+xml;base64,' +
      Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" onload="alert(1)"><script>alert(2)</script><rect width="10" height="10"/></svg>',
      ).toString('base64');
    const res = await svc.post('/v1/qr-styles', a.token, {
      name: 'Logo',
      config: { image: hostile, qrOptions: { errorCorrectionLevel: 'H' }, imageOptions: { imageSize: 0.05 } },
    });
    expect(res.status, res.text).to.equal(201);
    const stored = Buffer.from(res.body.data.config.image.split(',')[1], 'base64').toString();
    expect(stored).not.to.match(/onload|script/);
  });

  it('refuses a logo too costly to draw with 422 naming the problem, in a style and in a brand kit', async () => {
    const config = { image: costlySvgLogo(), qrOptions: { errorCorrectionLevel: 'H' } };
    const before = await styleCount();
    const res = await svc.post('/v1/qr-styles', a.token, { name: 'Costly logo', config });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('validation_failed');
    const [message] = res.body.errors['config.image'] as string[];
    expect(message).to.match(/^The logo takes (over )?\d+ ms to draw at 512 px, more than the 100 ms a logo may cost/);
    expect(await styleCount()).to.equal(before);
    // An ordinary logo is fine, and the same costly logo through a brand kit is refused on the kit.
    const ok = await svc.post('/v1/qr-styles', a.token, {
      name: 'PNG logo',
      config: { ...config, image: samplePngLogo() },
    });
    expect(ok.status, ok.text).to.equal(201);
    const brand = (
      await svc.post('/v1/brands', a.token, { name: 'Costly brand', brand_kit: { logo: samplePngLogo() } })
    ).body.data;
    const styled = await svc.post('/v1/qr-styles', a.token, {
      name: 'Kit logo',
      brand_ulid: brand.ulid,
      config: { ...config, image: 'brand:logo' },
    });
    expect(styled.status, styled.text).to.equal(201);
    const kit = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { brand_kit: { logo: costlySvgLogo() } });
    expect(kit.status, kit.text).to.equal(422);
    expect(kit.body.errors.brand_kit[0]).to.match(/^The logo takes (over )?\d+ ms to draw/);
  });

  it('qrctl styles check reports stored configs that do not fit the schema, and --rescan measures the others', async () => {
    const legacy = (await svc.post('/v1/qr-styles', a.token, { name: 'Legacy', config: {} })).body.data;
    await svc.app
      .db('qr_styles')
      .where({ ulid: legacy.ulid })
      .update({ config: JSON.stringify({ dots: { type: 'rounded' }, margin: 2 }), scannability: null });
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const code = await runCommand(
      svc.app,
      parseCommand(['styles', 'check', '--org', a.org.ulid, '--rescan', '--json']),
      io,
    );
    expect(code).to.equal(0);
    const result = JSON.parse(lines[0]);
    expect(result.not_fitting).to.equal(1);
    expect(result.rescanned).to.equal(result.checked - 1);
    const finding = result.findings.find((f: { style_ulid: string }) => f.style_ulid === legacy.ulid);
    expect(finding.errors).to.have.keys('config.dots');
    const inverted = result.findings.find((f: { name: string }) => f.name === 'Inverted');
    expect(inverted.scannability.reasons).to.include('inverted_colors');
  });
});
