import { expect } from 'chai';
import { ulid } from 'ulid';
import { assertConforms } from '../helpers/conformance.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { costlySvgLogo } from '../helpers/sample-logo.js';

describe('QR images: GET /v1/qr-codes/{code_ulid}/image', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let code: { ulid: string; public_url: string };

  /** The answer as bytes (images are binary), checked against the OpenAPI document like every other. */
  async function image(path: string, token: string, headers: Record<string, string> = {}) {
    const res = await fetch(svc.url + path, { headers: { Authorization: `Bearer ${token}`, ...headers } });
    const body = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    const parsed = type.includes('json') ? JSON.parse(body.toString()) : body.toString('latin1');
    await assertConforms({
      method: 'GET',
      path,
      status: res.status,
      headers: res.headers,
      body: body.length ? parsed : undefined,
    });
    return { status: res.status, headers: res.headers, body, json: type.includes('json') ? parsed : undefined };
  }

  async function newCode(org: TestOrg, slug: string, extra: Record<string, unknown> = {}) {
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug,
      destination: 'https://example.com/landing',
      domain_ulid: fallback,
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg({ slug: 'acme-img' });
    b = await svc.createOrg();
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    code = await newCode(a, 'poster');
  });
  after(() => svc?.close());

  it('marks every answer nosniff, and gives an SVG a policy that runs and fetches nothing', async () => {
    const svg = await image(`/v1/qr-codes/${code.ulid}/image`, a.token);
    expect(svg.headers.get('content-type')).to.match(/^image\/svg\+xml/);
    expect(svg.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(svg.headers.get('content-security-policy')).to.equal(
      "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; sandbox",
    );
    const png = await image(`/v1/qr-codes/${code.ulid}/image?format=png`, a.token);
    expect(png.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(png.headers.get('content-security-policy')).to.equal(null);
    const missing = await image(`/v1/qr-codes/${code.ulid}/image`, b.token);
    expect(missing.status).to.equal(404);
    expect(missing.headers.get('x-content-type-options')).to.equal('nosniff');
    const json = await svc.get('/v1/qr-codes', a.token);
    expect(json.headers.get('x-content-type-options')).to.equal('nosniff');
    const unauthenticated = await svc.get('/v1/qr-codes', undefined);
    expect(unauthenticated.headers.get('x-content-type-options')).to.equal('nosniff');
  });

  it('answers SVG by default, encoding the public_url (not the destination), with a strong ETag', async () => {
    const res = await image(`/v1/qr-codes/${code.ulid}/image`, a.token);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('image/svg+xml');
    expect(res.headers.get('etag')).to.match(/^"[A-Za-z0-9_-]{32}"$/);
    expect(res.headers.get('cache-control')).to.equal('private, no-cache');
    expect(res.headers.get('content-disposition')).to.equal(null);
    expect(res.body.toString()).to.match(/^<svg /);
    expect(await decodeQr(res.body, 400)).to.equal(code.public_url);
    expect(code.public_url).to.include('/acme-img/poster');
  });

  it('answers PNG (by format or Accept) of the asked size and PDF, each decodable or vector', async () => {
    const png = await image(`/v1/qr-codes/${code.ulid}/image?format=png&size=256`, a.token);
    expect(png.headers.get('content-type')).to.equal('image/png');
    expect(png.body.readUInt32BE(16)).to.equal(256);
    expect(await decodeQr(png.body)).to.equal(code.public_url);
    const byAccept = await image(`/v1/qr-codes/${code.ulid}/image?size=256`, a.token, { Accept: 'image/png' });
    expect(byAccept.headers.get('content-type')).to.equal('image/png');
    expect(byAccept.body.equals(png.body)).to.equal(true);
    const pdf = await image(`/v1/qr-codes/${code.ulid}/image`, a.token, { Accept: 'application/pdf' });
    expect(pdf.headers.get('content-type')).to.equal('application/pdf');
    expect(pdf.body.subarray(0, 5).toString()).to.equal('%PDF-');
    expect(pdf.body.toString('latin1')).to.include('/MediaBox [0 0 288 288]');
  });

  it('answers 304 to If-None-Match with the current ETag, and a new image once the style changes', async () => {
    const style = (
      await svc.post('/v1/qr-styles', a.token, { name: 'Blue', config: { dotsOptions: { color: '#0d47a1' } } })
    ).body.data;
    const styled = await newCode(a, 'styled', { style_ulid: style.ulid });
    const path = `/v1/qr-codes/${styled.ulid}/image?format=png&size=128`;
    const first = await image(path, a.token);
    const etag = first.headers.get('etag')!;
    const again = await image(path, a.token, { 'If-None-Match': etag });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
    expect(again.headers.get('etag')).to.equal(etag);
    expect((await image(path, a.token, { 'If-None-Match': `"other", W/${etag}` })).status).to.equal(304);
    // another format or size is another image
    expect((await image(`${path}&margin=2`, a.token, { 'If-None-Match': etag })).status).to.equal(200);
    const patched = await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, {
      config: { dotsOptions: { color: '#1b5e20' } },
    });
    expect(patched.status).to.equal(200);
    const changed = await image(path, a.token, { 'If-None-Match': etag });
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).not.to.equal(etag);
  });

  it('offers a download named <slug>.<ext> with download=1', async () => {
    const res = await image(`/v1/qr-codes/${code.ulid}/image?format=pdf&download=1`, a.token);
    expect(res.headers.get('content-disposition')).to.equal('attachment; filename="poster.pdf"');
  });

  it('renders with another style of the organization (style_ulid) and resolves its brand kit', async () => {
    const brand = (
      await svc.post('/v1/brands', a.token, { name: 'Kit', brand_kit: { colors: { primary: '#6a1b9a' } } })
    ).body.data;
    const style = (
      await svc.post('/v1/qr-styles', a.token, {
        name: 'Brand',
        brand_ulid: brand.ulid,
        config: { dotsOptions: { type: 'dots', color: 'brand:primary' } },
      })
    ).body.data;
    const res = await image(`/v1/qr-codes/${code.ulid}/image?style_ulid=${style.ulid}`, a.token);
    expect(res.status).to.equal(200);
    expect(res.body.toString()).to.include('fill="#6a1b9a"');
    expect(await decodeQr(res.body, 400)).to.equal(code.public_url);
  });

  it('refuses another organization’s style and bad parameters with 422', async () => {
    const theirs = (await svc.post('/v1/qr-styles', b.token, { name: 'Theirs', config: {} })).body.data;
    const res = await image(`/v1/qr-codes/${code.ulid}/image?style_ulid=${theirs.ulid}`, a.token);
    expect(res.status).to.equal(422);
    expect(res.json.errors).to.deep.equal({ style_ulid: ['No such style in this organization.'] });
    for (const q of ['format=gif', 'size=63', 'size=4097', 'margin=-1', 'margin=33', 'download=yes', 'colour=red']) {
      const bad = await image(`/v1/qr-codes/${code.ulid}/image?${q}`, a.token);
      expect(bad.status, q).to.equal(422);
    }
  });

  it('is 404 for another organization’s code and 403 without codes.view', async () => {
    const foreign = await image(`/v1/qr-codes/${code.ulid}/image`, b.token);
    expect(foreign.status).to.equal(404);
    expect(foreign.json.code).to.equal('not_found');
    const token = await svc.createToken(a.org, { abilities: ['codes.create'] });
    const forbidden = await image(`/v1/qr-codes/${code.ulid}/image`, token);
    expect(forbidden.status).to.equal(403);
    expect(forbidden.json.required_ability).to.equal('codes.view');
  });

  it('answers 409 for a code whose stored style does not fit the style schema', async () => {
    const style = (await svc.post('/v1/qr-styles', a.token, { name: 'Old', config: {} })).body.data;
    await svc.app
      .db('qr_styles')
      .where({ ulid: style.ulid })
      .update({ config: JSON.stringify({ dots: 'square' }) });
    const legacy = await newCode(a, 'legacy', { style_ulid: style.ulid });
    const res = await image(`/v1/qr-codes/${legacy.ulid}/image`, a.token);
    expect(res.status).to.equal(409);
    expect(res.json.message).to.include(style.ulid);
  });

  it('counts as a billable call', async () => {
    const before = (await svc.get('/v1/status', a.token)).body.api.calls_used_month;
    await image(`/v1/qr-codes/${code.ulid}/image`, a.token);
    const after = (await svc.get('/v1/status', a.token)).body.api.calls_used_month;
    expect(after - before).to.equal(1);
  });

  it('serves an identical second request from the render cache (same bytes and ETag), never to another organization', async () => {
    const path = `/v1/qr-codes/${code.ulid}/image?format=png&size=320&margin=2`;
    const drawn = svc.app.renders.rendered;
    const first = await image(path, a.token);
    const second = await image(path, a.token);
    expect(first.status).to.equal(200);
    expect(second.status).to.equal(200);
    expect(svc.app.renders.rendered - drawn, 'drawn once').to.equal(1);
    expect(second.body.equals(first.body)).to.equal(true);
    expect(second.headers.get('etag')).to.equal(first.headers.get('etag'));
    // Another organization asking for the cached image of a's code gets 404, not the image.
    expect((await image(path, b.token)).status).to.equal(404);
    // Its own code with the same options is drawn for it, with its own ETag.
    const own = await newCode(b, 'poster-b');
    const theirs = await image(`/v1/qr-codes/${own.ulid}/image?format=png&size=320&margin=2`, b.token);
    expect(theirs.status).to.equal(200);
    expect(svc.app.renders.rendered - drawn).to.equal(2);
    expect(theirs.headers.get('etag')).not.to.equal(first.headers.get('etag'));
    expect(await decodeQr(theirs.body, 320)).to.equal(own.public_url);
  });

  describe('with one render thread and no queue', () => {
    let one: TestService;
    let org: TestOrg;
    before(async () => {
      one = await startTestService({ config: { renderThreads: 1, renderQueue: 0 } });
      org = await one.createOrg();
    });
    after(() => one?.close());

    it('answers 503 with Retry-After while the thread is busy, and the image once it is free', async () => {
      const domain = (await one.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
      const made = async (slug: string) =>
        (await one.post('/v1/qr-codes', org.token, { slug, destination: 'https://example.com/', domain_ulid: domain }))
          .body.data as { ulid: string };
      const [slow, quick] = [await made('slow'), await made('quick')];
      // A style stored before logos were measured: its logo costs seconds to draw (saving it now is 422).
      const style = ulid();
      const now = new Date();
      await one.app.db('qr_styles').insert({
        ulid: style,
        org_id: org.org.id,
        name: 'Costly',
        config: JSON.stringify({ image: costlySvgLogo(), qrOptions: { errorCorrectionLevel: 'H' } }),
        created_at: now,
        updated_at: now,
      });
      const get = (path: string) =>
        fetch(one.url + path, { headers: { Authorization: `Bearer ${org.token}` } }).then(async (res) => ({
          status: res.status,
          headers: res.headers,
          text: await res.text(),
        }));
      const first = get(`/v1/qr-codes/${slow.ulid}/image?format=png&style_ulid=${style}`);
      await waitFor(() => one.app.renders.running > 0, Boolean, 30_000, 5);
      const refused = await get(`/v1/qr-codes/${quick.ulid}/image?format=png`);
      expect(refused.status, refused.text).to.equal(503);
      const seconds = Number(refused.headers.get('retry-after'));
      expect(seconds).to.be.at.least(1);
      expect(JSON.parse(refused.text)).to.include({ code: 'service_unavailable', retry_after: seconds });
      await assertConforms({
        method: 'GET',
        path: `/v1/qr-codes/${quick.ulid}/image`,
        status: 503,
        headers: refused.headers,
        body: JSON.parse(refused.text),
      });
      expect((await first).status).to.equal(200);
      expect((await get(`/v1/qr-codes/${quick.ulid}/image?format=png`)).status).to.equal(200);
    });
  });
});
