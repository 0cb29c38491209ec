import crypto from 'node:crypto';
import { expect } from 'chai';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { chRows, DESKTOP, FALLBACK, hit, IPHONE } from './redirect-fixtures.js';
import { waitFor } from '../helpers/poll.js';
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
    expect(
      (await createCode(a, { tracking_pixels: [{ provider: 'meta', id: examplePixelId('meta'), x: 1 }] })).status,
    ).to.equal(422);
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
    const bad = await svc.patch(`/v1/qr-codes/${code.ulid}`, a.token, {
      tracking_pixels: [{ provider: 'ga4', id: 'UA-1' }],
    });
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

describe('tracking pixels: the pixel page of the redirect, consent and its analytics', function () {
  this.timeout(90_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;
  const META = { provider: 'meta', id: examplePixelId('meta') };
  const GA4 = { provider: 'ga4', id: examplePixelId('ga4') };

  before(async () => {
    svc = await startTestService();
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    a = await svc.createOrg();
    b = await svc.createOrg();
    fallback = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  async function code(org: TestOrg, extra: Record<string, unknown>) {
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug: `pp${++n}`,
      destination: 'https://example.com/after',
      domain_ulid: fallback,
      ...extra,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body.data as { ulid: string; public_url: string };
  }
  const path = (c: { public_url: string }) => new URL(c.public_url).pathname;
  const get = (p: string, headers: Record<string, string> = {}) =>
    hit(rd.port, FALLBACK, p, { headers: { 'User-Agent': DESKTOP, ...headers } });

  async function recorded(codeUlid: string) {
    await rd.scans.flush();
    await rd.actions.flush();
    const id = (await svc.app.db('qr_codes').where({ ulid: codeUlid }).first('id')).id;
    const db = svc.app.ch.database;
    const scans = await chRows(svc.app, `SELECT scan_id FROM ${db}.scan_events WHERE code_id = {id:UInt64}`, { id });
    const actions = await chRows<{ action: string }>(
      svc.app,
      `SELECT action FROM ${db}.scan_actions WHERE code_id = {id:UInt64} ORDER BY scanned_at`,
      { id },
    );
    return { scans: scans.length, actions: actions.map((r) => r.action) };
  }

  /** The hash of the page's one inline script, as its CSP must name it. */
  function scriptHash(html: string): string {
    const m = /<script>([\s\S]*?)<\/script>/.exec(html);
    expect(m, 'the page has its script').to.not.equal(null);
    return crypto.createHash('sha256').update(m![1]).digest('base64');
  }

  it('a code without pixels is still answered with the plain 302', async () => {
    const c = await code(a, {});
    const res = await get(path(c));
    expect(res.status).to.equal(302);
    expect(res.headers.location).to.equal('https://example.com/after');
    expect(res.headers['set-cookie']).to.equal(undefined);
    expect(await recorded(c.ulid)).to.deep.equal({ scans: 1, actions: [] });
  });

  it('consent required: the banner, a CSP with exactly the providers’ hosts and the script’s hash; one scan, the answer recorded once it comes', async () => {
    const c = await code(a, { tracking_pixels: [META, GA4] });
    const res = await get(path(c));
    expect(res.status).to.equal(200);
    // The answers carry the scan's id: an answer replaces the scan's `asked` outcome.
    const id = /id="accept" href="\?qr_consent=granted&amp;qr_scan=([0-9A-Z]{26})"/.exec(res.body)?.[1];
    expect(id, 'Accept carries the scan id').to.be.a('string');
    expect(res.body).to.include(`id="decline" href="?qr_consent=denied&amp;qr_scan=${id}"`);
    expect(res.body).to.include('data-mode="ask"');
    expect(res.body).to.include('Meta, Google Analytics');
    expect(res.headers['content-security-policy']).to.equal(
      `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash(res.body)}' ` +
        'https://*.googletagmanager.com https://connect.facebook.net; ' +
        'img-src https://*.google-analytics.com https://*.googletagmanager.com https://www.facebook.com; ' +
        'connect-src https://*.analytics.google.com https://*.google-analytics.com https://*.googletagmanager.com ' +
        "https://connect.facebook.net https://www.facebook.com; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
    );
    // Nothing of a provider is on the page outside the script, which loads them only in load().
    const outside = res.body.replace(/<script>[\s\S]*?<\/script>/, '');
    expect(outside).not.to.match(/facebook|google/);
    expect(await recorded(c.ulid)).to.deep.equal({ scans: 1, actions: ['consent_asked'] });

    const accepted = await get(`${path(c)}?qr_consent=granted&qr_scan=${id}`);
    expect(accepted.status).to.equal(302);
    expect(accepted.headers.location).to.equal('https://example.com/after');
    const orgPath = `/${path(c).split('/')[1]}`;
    expect(accepted.headers['set-cookie']).to.deep.equal([
      `qr_consent=granted; Max-Age=${183 * 86400}; Path=${orgPath}; HttpOnly; SameSite=Lax`,
    ]);
    expect(await recorded(c.ulid)).to.deep.equal({ scans: 1, actions: ['consent_asked', 'consent_granted'] });
  });

  it('consent is one outcome per scan: a page left without an answer counts as none, an answer replaces the scan’s none', async () => {
    const org = await svc.createOrg();
    const dom = (await svc.get('/v1/domains', org.token)).body.data[0].ulid;
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug: 'ask',
      destination: 'https://example.com/ask',
      domain_ulid: dom,
      tracking_pixels: [META],
    });
    const c = res.body.data;
    /** A scan: the banner served, and the scan id its answers carry. */
    const banner = async () => {
      const page = await get(path(c));
      expect(page.status).to.equal(200);
      return /\?qr_consent=none&amp;qr_scan=([0-9A-Z]{26})/.exec(page.body)![1];
    };
    await banner(); // closed before answering and before the time ran out
    const accepted = await banner();
    expect((await get(`${path(c)}?qr_consent=granted&qr_scan=${accepted}`)).status).to.equal(302);
    const timedOut = await banner();
    expect((await get(`${path(c)}?qr_consent=none&qr_scan=${timedOut}`)).status).to.equal(302);
    const declined = await banner();
    await get(`${path(c)}?qr_consent=denied&qr_scan=${declined}`);
    const r = await recorded(c.ulid);
    expect(r.scans).to.equal(4);
    const expected = [
      { key: 'none', label: 'No answer', scans: 2, uniques: 1 },
      { key: 'denied', label: 'Declined', scans: 1, uniques: 1 },
      { key: 'granted', label: 'Accepted', scans: 1, uniques: 1 },
    ];
    const perCode = await svc.get(`/v1/analytics/qr-codes/${c.ulid}?dimension=consent`, org.token);
    expect(perCode.body.data.dimension_breakdown).to.deep.equal(expected);
    // As many outcomes as scans.
    expect(perCode.body.data.totals.scans).to.equal(4);
    const perOrg = await svc.get('/v1/analytics?dimension=consent', org.token);
    expect(perOrg.body.data.dimension_breakdown).to.deep.equal(expected);
    const today = new Date().toISOString().slice(0, 10);
    const exported = await svc.get('/v1/analytics/export?dimension=consent', org.token);
    expect(exported.body.data.csv_rows).to.deep.equal([
      { date: today, consent: 'No answer', scans: 2 },
      { date: today, consent: 'Declined', scans: 1 },
      { date: today, consent: 'Accepted', scans: 1 },
    ]);
  });

  it('a remembered accept loads the pixels at once; a remembered decline is the plain 302; no answer is none', async () => {
    const c = await code(a, { tracking_pixels: [META] });
    const granted = await get(path(c), { Cookie: 'qr_consent=granted' });
    expect(granted.status).to.equal(200);
    expect(granted.body).to.include('data-mode="load"');
    expect(granted.body).to.include('data-next="https://example.com/after"');
    expect(granted.body).not.to.include('id="accept"');
    const denied = await get(path(c), { Cookie: 'other=1; qr_consent=denied' });
    expect(denied.status).to.equal(302);
    expect(denied.headers.location).to.equal('https://example.com/after');
    const none = await get(`${path(c)}?qr_consent=none`);
    expect(none.status).to.equal(302);
    expect(none.headers['set-cookie']).to.equal(undefined);
    const declined = await get(`${path(c)}?qr_consent=denied`);
    expect(String(declined.headers['set-cookie'])).to.match(/^qr_consent=denied; Max-Age=15811200; Path=\//);
    const r = await recorded(c.ulid);
    expect(r.scans).to.equal(2);
    expect(r.actions.sort()).to.deep.equal(['consent_denied', 'consent_denied', 'consent_granted', 'consent_none']);
  });

  it('the banner speaks the page’s language', async () => {
    const c = await code(a, { tracking_pixels: [GA4] });
    const de = await get(path(c), { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' });
    expect(de.headers['content-language']).to.equal('de');
    expect(de.body).to.include('<html lang="de">');
    expect(de.body).to.include('>Zustimmen</a>');
    expect(de.body).to.include('>Ablehnen</a>');
    const fr = await get(path(c), { 'Accept-Language': 'fr' });
    expect(fr.body).to.include('>Accepter</a>');
  });

  it('a brand’s default pixels apply to its codes without their own; an empty list of its own turns them off', async () => {
    const brand = (await svc.post('/v1/brands', a.token, { name: `Px ${++n}`, tracking_pixels: [GA4] })).body.data;
    const inherits = await code(a, { brand_ulid: brand.ulid });
    const off = await code(a, { brand_ulid: brand.ulid, tracking_pixels: [] });
    expect((await get(path(inherits))).status).to.equal(200);
    expect((await get(path(off))).status).to.equal(302);
    // A change of the brand's list reaches the cached code (sql/0060's notification).
    await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { tracking_pixels: null });
    await waitFor(
      async () => (await get(path(inherits))).status,
      (s) => s === 302,
    );
  });

  it('pixel_consent not_required: pixels at once, recorded as not_required; a breakdown by consent per code and organization, and in the export', async () => {
    const org = await svc.createOrg();
    await svc.patch('/v1/organization', org.token, { pixel_consent: 'not_required' });
    const dom = (await svc.get('/v1/domains', org.token)).body.data[0].ulid;
    const c = (
      await svc.post('/v1/qr-codes', org.token, {
        slug: 'nr',
        destination: 'https://example.com/nr',
        domain_ulid: dom,
        tracking_pixels: [META],
      })
    ).body.data;
    const res = await get(path(c));
    expect(res.status).to.equal(200);
    expect(res.body).to.include('data-mode="load"');
    await get(path(c), { 'User-Agent': IPHONE });
    // A visitor of another organization's code: not in this organization's numbers.
    const other = await code(b, { tracking_pixels: [META] });
    await get(`${path(other)}?qr_consent=granted`);
    expect(await recorded(c.ulid)).to.deep.equal({
      scans: 2,
      actions: ['consent_not_required', 'consent_not_required'],
    });
    await recorded(other.ulid);
    const perCode = await svc.get(`/v1/analytics/qr-codes/${c.ulid}?dimension=consent`, org.token);
    expect(perCode.status, perCode.text).to.equal(200);
    expect(perCode.body.data.dimension_label).to.equal('Pixel consent');
    expect(perCode.body.data.dimension_breakdown).to.deep.equal([
      { key: 'not_required', label: 'Not required', scans: 2, uniques: 2 },
    ]);
    const perOrg = await svc.get('/v1/analytics?dimension=consent', org.token);
    expect(perOrg.body.data.dimension_breakdown).to.deep.equal([
      { key: 'not_required', label: 'Not required', scans: 2, uniques: 2 },
    ]);
    const exported = await svc.get('/v1/analytics/export?dimension=consent', org.token);
    expect(exported.status, exported.text).to.equal(200);
    expect(exported.body.data.csv_rows).to.deep.equal([
      { date: new Date().toISOString().slice(0, 10), consent: 'Not required', scans: 2 },
    ]);
    // The other organization sees its own answer only.
    const theirs = await svc.get('/v1/analytics?dimension=consent', b.token);
    expect(theirs.body.data.dimension_breakdown.map((e: { key: string }) => e.key)).to.deep.equal(['granted']);
  });
});
