import { expect } from 'chai';
import { ulid } from 'ulid';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { chRows, DESKTOP, FALLBACK, hit, IPHONE } from './redirect-fixtures.js';
import { examplePixelId } from '../../server/qr-codes/pixels.js';

describe('conversions: qr_scan on the destination, POST /v1/conversions, analytics', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;

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

  /** A scan of a new tracked code of the organization: the code and the scan id its destination got. */
  async function scan(org: TestOrg, ua = DESKTOP): Promise<{ code: string; scanId: string }> {
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug: `cv${++n}`,
      destination: 'https://shop.example.com/p?x=1#top',
      domain_ulid: fallback,
      conversion_tracking: true,
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.conversion_tracking).to.equal(true);
    const r = await hit(rd.port, FALLBACK, new URL(res.body.data.public_url).pathname, {
      headers: { 'User-Agent': ua },
    });
    expect(r.status).to.equal(302);
    const m = /^https:\/\/shop\.example\.com\/p\?x=1&qr_scan=([0-9A-Z]{26})#top$/.exec(String(r.headers.location));
    expect(m, String(r.headers.location)).to.not.equal(null);
    await rd.scans.flush();
    return { code: res.body.data.ulid, scanId: m![1] };
  }

  it('a code without conversion_tracking gets no qr_scan', async () => {
    const res = await svc.post('/v1/qr-codes', a.token, {
      slug: `cv${++n}`,
      destination: 'https://shop.example.com/p',
      domain_ulid: fallback,
    });
    expect(res.body.data.conversion_tracking).to.equal(false);
    const r = await hit(rd.port, FALLBACK, new URL(res.body.data.public_url).pathname, {
      headers: { 'User-Agent': DESKTOP },
    });
    expect(r.headers.location).to.equal('https://shop.example.com/p');
  });

  it('with pixels: the page answer carries the scan id on; a qr_scan on a new scan’s URL is never its id', async () => {
    const res = await svc.post('/v1/qr-codes', a.token, {
      slug: `cv${++n}`,
      destination: 'https://shop.example.com/p',
      domain_ulid: fallback,
      conversion_tracking: true,
      tracking_pixels: [{ provider: 'ga4', id: examplePixelId('ga4') }],
    });
    expect(res.status, res.text).to.equal(201);
    const path = new URL(res.body.data.public_url).pathname;
    // Another scan's id put on the code's URL by whoever printed or shared the link.
    const foreign = ulid();
    const page = await hit(rd.port, FALLBACK, `${path}?qr_scan=${foreign}`, { headers: { 'User-Agent': DESKTOP } });
    expect(page.status).to.equal(200);
    const m = /\?qr_consent=none&amp;qr_scan=([0-9A-Z]{26})/.exec(page.body);
    expect(m, 'the banner’s answer carries the scan id').to.not.equal(null);
    const scanId = m![1];
    expect(scanId).to.not.equal(foreign);
    const answer = await hit(rd.port, FALLBACK, `${path}?qr_consent=denied&qr_scan=${scanId}`, {
      headers: { 'User-Agent': DESKTOP },
    });
    expect(answer.status).to.equal(302);
    expect(answer.headers.location).to.equal(`https://shop.example.com/p?qr_scan=${scanId}`);
    await rd.scans.flush();
    const id = (await svc.app.db('qr_codes').where({ ulid: res.body.data.ulid }).first('id')).id;
    const rows = await chRows<{ scan_id: string }>(
      svc.app,
      `SELECT scan_id FROM ${svc.app.ch.database}.scan_events WHERE code_id = {id:UInt64}`,
      { id },
    );
    expect(rows.map((r) => r.scan_id)).to.deep.equal([scanId]);
  });

  it('records a conversion of the scan the destination got, with its amount', async () => {
    const { code, scanId } = await scan(a);
    const res = await svc.post('/v1/conversions', a.token, {
      scan_id: scanId,
      event: 'sale',
      external_id: 'order-1',
      amount: '12.5',
      currency: 'EUR',
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.meta).to.deep.equal({ created: true });
    expect(res.body.data).to.include({
      scan_id: scanId,
      event: 'sale',
      external_id: 'order-1',
      amount: '12.50',
      currency: 'EUR',
    });
    expect(res.body.data.qr_code).to.deep.equal({ ulid: code });
  });

  it('counts exactly once under 50 concurrent retries', async () => {
    // An organization of its own: 50 calls at once are most of a minute's rate limit.
    const org = await svc.createOrg({ plan: 'enterprise_monthly' });
    const { scanId } = await scan(org);
    const body = { scan_id: scanId, event: 'lead', external_id: 'form-7' };
    const answers = await Promise.all(Array.from({ length: 50 }, () => svc.post('/v1/conversions', org.token, body)));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(50).fill(201));
    expect(answers.filter((r) => r.body.meta.created)).to.have.length(1);
    expect(new Set(answers.map((r) => r.body.data.ulid)).size).to.equal(1);
    const [{ c }] = await svc.app.db('conversions').where({ scan_id: scanId }).count<{ c: string }[]>('* as c');
    expect(Number(c)).to.equal(1);
    // Another event or external id of the same scan is another conversion.
    const other = await svc.post('/v1/conversions', org.token, { ...body, external_id: 'form-8' });
    expect(other.body.meta.created).to.equal(true);
  });

  it('404 for a scan of another organization or an unknown one, 422 for one older than 90 days or a bad amount; nothing recorded', async () => {
    const { scanId } = await scan(a);
    const foreign = await svc.post('/v1/conversions', b.token, { scan_id: scanId, event: 'sale' });
    expect(foreign.status).to.equal(404);
    const unknown = await svc.post('/v1/conversions', a.token, { scan_id: ulid(), event: 'sale' });
    expect(unknown.status).to.equal(404);
    const old = await svc.post('/v1/conversions', a.token, {
      scan_id: ulid(Date.now() - 91 * 86_400_000),
      event: 'sale',
    });
    expect(old.status).to.equal(422);
    expect(old.body.errors.scan_id[0]).to.match(/older than 90 days/);
    const noCurrency = await svc.post('/v1/conversions', a.token, { scan_id: scanId, event: 'sale', amount: '1' });
    expect(noCurrency.status).to.equal(422);
    const tooPrecise = await svc.post('/v1/conversions', a.token, {
      scan_id: scanId,
      event: 'sale',
      amount: '1.5',
      currency: 'JPY',
    });
    expect(tooPrecise.status).to.equal(422);
    const [{ c }] = await svc.app.db('conversions').where({ scan_id: scanId }).count<{ c: string }[]>('* as c');
    expect(Number(c)).to.equal(0);
  });

  it('needs conversions.write', async () => {
    const { scanId } = await scan(a);
    const viewer = await svc.createToken(a.org, { abilities: ['codes.view'] });
    const res = await svc.post('/v1/conversions', viewer, { scan_id: scanId, event: 'sale' });
    expect(res.status).to.equal(403);
    expect(res.body.required_ability).to.equal('conversions.write');
  });

  it('analytics of the code and the organization carry the conversions: count, unique visitors, amount per currency', async () => {
    const org = await svc.createOrg();
    const s1 = await scan(org);
    const s2 = await scan(org, IPHONE);
    await svc.post('/v1/conversions', org.token, { scan_id: s1.scanId, event: 'sale', amount: '10', currency: 'EUR' });
    await svc.post('/v1/conversions', org.token, { scan_id: s1.scanId, event: 'lead' });
    await svc.post('/v1/conversions', org.token, {
      scan_id: s2.scanId,
      event: 'sale',
      amount: '2.25',
      currency: 'EUR',
    });
    await svc.post('/v1/conversions', org.token, {
      scan_id: s2.scanId,
      event: 'sale',
      external_id: 'b',
      amount: '5',
      currency: 'USD',
    });
    const whole = await svc.get('/v1/analytics', org.token);
    expect(whole.body.data.conversions).to.deep.equal({
      count: 4,
      unique_visitors: 2,
      amounts: [
        { currency: 'EUR', amount: '12.25' },
        { currency: 'USD', amount: '5.00' },
      ],
    });
    const perCode = await svc.get(`/v1/analytics/qr-codes/${s1.code}`, org.token);
    expect(perCode.body.data.conversions).to.deep.equal({
      count: 2,
      unique_visitors: 1,
      amounts: [{ currency: 'EUR', amount: '10.00' }],
    });
    const exported = await svc.get('/v1/analytics/export', org.token);
    expect(exported.body.data.conversions.count).to.equal(4);
    // Isolation: the other organization sees none of them.
    expect((await svc.get('/v1/analytics', b.token)).body.data.conversions.count).to.equal(0);
  });
});
