// POST /v1/qr-codes/preview: the QR image of a code before it is created. The symbol is decoded by
// ZXing (not our renderer) and must hold what the created code's image holds: its public_url, or a
// static type's payload. Nothing is stored; another organization's domain or style is refused.
import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';

describe('POST /v1/qr-codes/preview: a code’s QR image before it is saved', function () {
  // Renders and decodes: slow on a busy machine.
  this.timeout(120_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg({ slug: 'acme-draft' });
    b = await svc.createOrg();
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
  });
  after(() => svc?.close());

  const codeCount = async () => Number((await svc.app.db('qr_codes').count({ n: '*' }).first())!.n);

  it('encodes the public_url the slug and domain give, the one the created code then has', async () => {
    const before = await codeCount();
    const res = await svc.post('/v1/qr-codes/preview', a.token, {
      slug: 'spring-menu',
      domain_ulid: fallback,
      destination: 'https://example.com/not-encoded',
      format: 'png',
      size: 400,
    });
    expect(res.status, res.text).to.equal(200);
    const draft = res.body.data;
    expect(draft.public_url).to.match(/\/acme-draft\/spring-menu$/);
    expect(draft.text).to.equal(draft.public_url);
    expect(draft.content_type).to.equal('image/png');
    expect(await decodeQr(Buffer.from(draft.image, 'base64'))).to.equal(draft.public_url);
    expect(draft.scannability).to.deep.include({ check: 'quick', verdict: 'pass', decoded: true });
    expect(await codeCount()).to.equal(before);

    const created = await svc.post('/v1/qr-codes', a.token, {
      slug: 'spring-menu',
      domain_ulid: fallback,
      destination: 'https://example.com/menu',
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.public_url).to.equal(draft.public_url);
    // The slug is not checked against existing codes: a taken slug still previews.
    expect(
      (await svc.post('/v1/qr-codes/preview', a.token, { slug: 'spring-menu', domain_ulid: fallback })).status,
    ).to.equal(200);
  });

  it('encodes a static type’s payload, with no public_url, drawn in the chosen style', async () => {
    const style = (
      await svc.post('/v1/qr-styles', a.token, { name: 'Navy', config: { dotsOptions: { color: '#1e3a8a' } } })
    ).body.data;
    const destination = { ssid: 'Acme Guest', password: 'espresso-42', encryption: 'WPA' };
    const res = await svc.post('/v1/qr-codes/preview', a.token, {
      slug: 'wifi',
      type: 'wifi',
      domain_ulid: fallback,
      destination,
      style_ulid: style.ulid,
      format: 'png',
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.public_url).to.equal(null);
    expect(res.body.data.text).to.match(/^WIFI:/);
    expect(await decodeQr(Buffer.from(res.body.data.image, 'base64'))).to.equal(res.body.data.text);
    const svg = await svc.post('/v1/qr-codes/preview', a.token, {
      slug: 'wifi',
      type: 'wifi',
      domain_ulid: fallback,
      destination,
      style_ulid: style.ulid,
    });
    expect(svg.body.data.image).to.match(/^<svg/).and.to.include('fill="#1e3a8a"');
    // The very text the created code's image encodes.
    const created = await svc.post('/v1/qr-codes', a.token, {
      slug: 'wifi',
      type: 'wifi',
      domain_ulid: fallback,
      destination,
    });
    expect(created.status, created.text).to.equal(201);
    const image = await fetch(`${svc.url}/v1/qr-codes/${created.body.data.ulid}/image?format=png`, {
      headers: { Authorization: `Bearer ${a.token}` },
    });
    expect(await decodeQr(Buffer.from(await image.arrayBuffer()))).to.equal(res.body.data.text);
  });

  it('answers 422 with the fields the symbol still needs', async () => {
    const noDestination = await svc.post('/v1/qr-codes/preview', a.token, {
      slug: 'wifi',
      type: 'wifi',
      domain_ulid: fallback,
    });
    expect(noDestination.status).to.equal(422);
    expect(Object.keys(noDestination.body.errors)).to.deep.equal(['destination']);
    const badSlug = await svc.post('/v1/qr-codes/preview', a.token, { slug: 'no spaces', domain_ulid: fallback });
    expect(badSlug.status).to.equal(422);
    expect(Object.keys(badSlug.body.errors)).to.include('slug');
    const noDomain = await svc.post('/v1/qr-codes/preview', a.token, { slug: 'x' });
    expect(noDomain.status).to.equal(422);
    expect(Object.keys(noDomain.body.errors)).to.include('domain_ulid');
  });

  it('refuses another organization’s domain and style as unknown, and needs codes.create', async () => {
    const theirStyle = (await svc.post('/v1/qr-styles', b.token, { name: 'Theirs', config: {} })).body.data;
    const theirDomain = (await svc.post('/v1/domains', b.token, { host: 'draft-b.example' })).body.data;
    const style = await svc.post('/v1/qr-codes/preview', a.token, {
      slug: 'x',
      domain_ulid: fallback,
      style_ulid: theirStyle.ulid,
    });
    expect(style.status).to.equal(422);
    expect(style.body.errors).to.deep.equal({ style_ulid: ['No such style in this organization.'] });
    const domain = await svc.post('/v1/qr-codes/preview', a.token, { slug: 'x', domain_ulid: theirDomain.ulid });
    expect(domain.status).to.equal(422);
    expect(domain.body.errors).to.deep.equal({ domain_ulid: ['No such domain in this organization.'] });
    const token = await svc.createToken(a.org, { abilities: ['codes.view'] });
    const forbidden = await svc.post('/v1/qr-codes/preview', token, { slug: 'x', domain_ulid: fallback });
    expect(forbidden.status).to.equal(403);
    expect(forbidden.body.required_ability).to.equal('codes.create');
  });
});
