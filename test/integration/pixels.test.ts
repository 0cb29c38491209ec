import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { examplePixelId, PIXEL_PROVIDERS, pixelIdProblem } from '../../server/qr-codes/pixels.js';

/** Ids that each provider's documented form refuses (wrong prefix, length or characters). */
const BAD_IDS: Record<string, string[]> = {
  meta: ['12345', '12345678901234567', 'abc123456789012'],
  ga4: ['UA-12345-1', 'G-', 'g-abc12345', 'G-ABC"1234'],
  google_ads: ['AW-12', '123456789', 'AW-123456789/</script>'],
  linkedin: ['abc', '12', '12345678901'],
  tiktok: ['C4A1B2C3D4E5F6G7H8I', 'c4a1b2c3d4e5f6g7h8i9', 'C4A1B2C3D4E5F6G7H8I9X'],
  x: ['O1A2B', 'o1a', 'o1a2b3c'],
  pinterest: ['261234567890', '26123456789012', 'abcdefghijklm'],
  custom: ['http://track.example.com/p.gif', 'javascript:alert(1)', 'track.example.com/p.gif'],
};

describe('tracking pixels: codes and brands', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    fallback = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
  });
  after(() => svc?.close());

  const createCode = (org: TestOrg, extra: Record<string, unknown>) =>
    svc.post('/v1/qr-codes', org.token, {
      slug: `px${++n}`,
      destination: 'https://example.com/landing',
      domain_ulid: fallback,
      ...extra,
    });

  it('stores up to 10 pixels of every provider on a code and echoes them', async () => {
    const pixels = PIXEL_PROVIDERS.map((provider) => ({ provider, id: examplePixelId(provider) }));
    const res = await createCode(a, { tracking_pixels: pixels });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.tracking_pixels).to.deep.equal(pixels);
    const read = await svc.get(`/v1/qr-codes/${res.body.data.ulid}`, a.token);
    expect(read.body.data.tracking_pixels).to.deep.equal(pixels);
  });

  it('a plain code has tracking_pixels null', async () => {
    const res = await createCode(a, {});
    expect(res.body.data.tracking_pixels).to.equal(null);
  });

  for (const provider of PIXEL_PROVIDERS) {
    it(`refuses a ${provider} id not of the documented form with 422 naming the expected form`, async () => {
      for (const id of BAD_IDS[provider]) {
        const res = await createCode(a, { tracking_pixels: [{ provider, id }] });
        expect(res.status, `${provider} ${id}: ${res.text}`).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors['tracking_pixels.0.id'], id).to.deep.equal([pixelIdProblem(provider)]);
      }
    });
  }

  it('refuses more than 10 pixels, an unknown provider, an extra key and a static code with pixels', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => ({ provider: 'linkedin', id: String(1000 + i) }));
    expect((await createCode(a, { tracking_pixels: eleven })).status).to.equal(422);
    const unknown = await createCode(a, { tracking_pixels: [{ provider: 'snapchat', id: '1' }] });
    expect(unknown.status).to.equal(422);
    expect(Object.keys(unknown.body.errors)).to.include('tracking_pixels.0.provider');
    expect((await createCode(a, { tracking_pixels: [{ provider: 'meta', id: examplePixelId('meta'), x: 1 }] })).status).to.equal(422);
    const text = await createCode(a, {
      type: 'text',
      destination: { text: 'hello' },
      tracking_pixels: [{ provider: 'meta', id: examplePixelId('meta') }],
    });
    expect(text.status, text.text).to.equal(422);
    expect(text.body.errors).to.have.property('tracking_pixels');
  });

  it('PATCH sets, replaces and clears a code’s pixels; a custom URL is stored normalised', async () => {
    const code = (await createCode(a, {})).body.data;
    const set = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, {
      tracking_pixels: [{ provider: 'custom', id: 'HTTPS://Track.Example.com/p.gif?a=b' }],
    });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.data.tracking_pixels).to.deep.equal([
      { provider: 'custom', id: 'https://track.example.com/p.gif?a=b' },
    ]);
    const bad = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { tracking_pixels: [{ provider: 'ga4', id: 'UA-1' }] });
    expect(bad.status).to.equal(422);
    const cleared = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, { tracking_pixels: null });
    expect(cleared.body.data.tracking_pixels).to.equal(null);
  });

  it('a brand carries a default list, validated like a code’s', async () => {
    const pixels = [{ provider: 'tiktok', id: examplePixelId('tiktok') }];
    const brand = await svc.post('/v1/brands', a.token, { name: `Pixels ${++n}`, tracking_pixels: pixels });
    expect(brand.status, brand.text).to.equal(201);
    expect(brand.body.data.tracking_pixels).to.deep.equal(pixels);
    const bad = await svc.patch(`/v1/brands/${brand.body.data.ulid}`, a.token, {
      tracking_pixels: [{ provider: 'pinterest', id: '12' }],
    });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors['tracking_pixels.0.id']).to.deep.equal([pixelIdProblem('pinterest')]);
    const cleared = await svc.patch(`/v1/brands/${brand.body.data.ulid}`, a.token, { tracking_pixels: null });
    expect(cleared.body.data.tracking_pixels).to.equal(null);
  });

  it('pixel_consent: required by default, changed by PATCH /v1/organization (organization.manage), per organization', async () => {
    expect((await svc.get('/v1/organization', a.token)).body.data.pixel_consent).to.equal('required');
    const res = await svc.patch('/v1/organization', a.token, { pixel_consent: 'not_required' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.pixel_consent).to.equal('not_required');
    expect((await svc.get('/v1/organization', a.token)).body.data.pixel_consent).to.equal('not_required');
    // Isolation: the other organization's setting is its own.
    expect((await svc.get('/v1/organization', b.token)).body.data.pixel_consent).to.equal('required');
    expect((await svc.patch('/v1/organization', a.token, { pixel_consent: 'maybe' })).status).to.equal(422);
    const editor = await svc.createToken(a.org, { role: 'editor' });
    const denied = await svc.patch('/v1/organization', editor, { pixel_consent: 'required' });
    expect(denied.status).to.equal(403);
    expect(denied.body.required_ability).to.equal('organization.manage');
    await svc.patch('/v1/organization', a.token, { pixel_consent: 'required' });
  });

  it('isolation: another organization’s code and brand with pixels are 404', async () => {
    const code = (await createCode(a, { tracking_pixels: [{ provider: 'x', id: 'o1a2b' }] })).body.data;
    const brand = (await svc.post('/v1/brands', a.token, { name: `Iso ${++n}` })).body.data;
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, b.token)).status).to.equal(404);
    const patchCode = await svc.patch(`/v1/qr-codes/${code.ulid}`, b.token, { tracking_pixels: null });
    expect(patchCode.status).to.equal(404);
    const patchBrand = await svc.patch(`/v1/brands/${brand.ulid}`, b.token, { tracking_pixels: null });
    expect(patchBrand.status).to.equal(404);
    expect((await svc.get(`/v1/qr-codes/${code.ulid}`, a.token)).body.data.tracking_pixels).to.have.length(1);
  });
});
