import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { chRows, DESKTOP, FALLBACK, hit, IPHONE } from './redirect-fixtures.js';
import { examplePixelId } from '../../server/qr-codes/pixels.js';
import { startWorker } from '../../workers/index.js';
import { verified, WebhookReceiver } from '../helpers/webhook-receiver.js';
import { toolOk } from './mcp-helpers.js';

describe('conversions: qr_scan on the destination, POST /v1/conversions, analytics', function () {
  this.timeout(120_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let receiver: WebhookReceiver;
  let n = 0;

  before(async () => {
    receiver = await WebhookReceiver.start();
    svc = await startTestService({ config: { webhookAllowedTargets: ['127.0.0.1/32'] } });
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50, counterFlushMs: 50 });
    a = await svc.createOrg();
    b = await svc.createOrg();
    fallback = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
    await receiver?.close();
  });

  /** A scan of a new tracked code of the organization: the code and the scan id its destination got. */
  async function scan(org: TestOrg, ua = DESKTOP, brand?: string): Promise<{ code: string; scanId: string }> {
    const res = await svc.post('/v1/qr-codes', org.token, {
      slug: `cv${++n}`,
      destination: 'https://shop.example.com/p?x=1#top',
      domain_ulid: fallback,
      conversion_tracking: true,
      ...(brand ? { brand_ulid: brand } : {}),
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

  it('delivers conversion.recorded once, through the worker, signed as Standard Webhooks says', async () => {
    const org = await svc.createOrg();
    const hook = await svc.post('/v1/webhooks', org.token, {
      url: receiver.url('/conv'),
      events: ['conversion.recorded'],
    });
    expect(hook.status, hook.text).to.equal(201);
    const { code, scanId } = await scan(org);
    const body = { scan_id: scanId, event: 'sale', external_id: 'o-9', amount: '19.99', currency: 'EUR' };
    const first = await svc.post('/v1/conversions', org.token, body);
    const again = await svc.post('/v1/conversions', org.token, body);
    expect(again.body.meta.created).to.equal(false);
    const runner = await startWorker(svc.app);
    try {
      const [got] = await receiver.waitFor(1);
      expect(got.path).to.equal('/conv');
      // Verified by the standardwebhooks library against the endpoint's secret: id, timestamp, signature.
      const event = verified(hook.body.secret, got);
      expect(event.type).to.equal('conversion.recorded');
      expect(event.data).to.deep.equal(first.body.data);
      expect(event.data).to.include({ scan_id: scanId, event: 'sale', amount: '19.99', currency: 'EUR' });
      expect(event.data.qr_code).to.deep.equal({ ulid: code });
      expect(got.headers['webhook-id']).to.match(/^msg_[0-9A-Z]{26}$/);
      // A wrong secret does not verify.
      expect(() => verified(`whsec_${Buffer.alloc(24, 7).toString('base64')}`, got)).to.throw();
      const log = await svc.get(`/v1/webhooks/${hook.body.data.ulid}/deliveries`, org.token);
      expect(log.body.data.map((d: { status: string }) => d.status)).to.deep.equal(['succeeded']);
    } finally {
      await runner.stop();
    }
    // The repeat wrote no second event.
    const events = await svc.app.db('webhook_events').where({ org_id: org.org.id, type: 'conversion.recorded' });
    expect(events).to.have.length(1);
    expect(receiver.received.filter((r) => r.path === '/conv')).to.have.length(1);
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
    expect(whole.body.data.conversions).to.deep.include({
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

  describe('per brand and per code, in the export and the conversions export', () => {
    let x: TestOrg;
    let brand: string;
    let s1: { code: string; scanId: string };
    let s2: { code: string; scanId: string };
    let s3: { code: string; scanId: string };
    const sale = (org: TestOrg, scanId: string, extra: Record<string, string> = {}) =>
      svc.post('/v1/conversions', org.token, { scan_id: scanId, event: 'sale', ...extra });

    before(async () => {
      x = await svc.createOrg();
      const b1 = await svc.post('/v1/brands', x.token, { name: 'Shoes' });
      expect(b1.status, b1.text).to.equal(201);
      brand = b1.body.data.ulid;
      s1 = await scan(x, DESKTOP, brand);
      s2 = await scan(x, IPHONE, brand);
      s3 = await scan(x, DESKTOP);
      for (const r of await Promise.all([
        sale(x, s1.scanId, { amount: '10', currency: 'EUR' }),
        svc.post('/v1/conversions', x.token, { scan_id: s1.scanId, event: 'lead' }),
        sale(x, s2.scanId, { amount: '2.25', currency: 'EUR' }),
        sale(x, s2.scanId, { external_id: 'b', amount: '5', currency: 'USD' }),
        sale(x, s3.scanId, { amount: '1000', currency: 'JPY' }),
      ]))
        expect(r.status, r.text).to.equal(201);
    });

    it('the organization scope lists conversions per brand and per code, amounts per currency', async () => {
      const c = (await svc.get('/v1/analytics', x.token)).body.data.conversions;
      expect(c).to.deep.include({
        count: 5,
        unique_visitors: 2,
        amounts: [
          { currency: 'EUR', amount: '12.25' },
          { currency: 'JPY', amount: '1000' },
          { currency: 'USD', amount: '5.00' },
        ],
      });
      expect(c.by_brand).to.deep.equal([
        {
          key: brand,
          label: 'Shoes',
          count: 4,
          unique_visitors: 2,
          amounts: [
            { currency: 'EUR', amount: '12.25' },
            { currency: 'USD', amount: '5.00' },
          ],
        },
        { key: '', label: 'No brand', count: 1, unique_visitors: 1, amounts: [{ currency: 'JPY', amount: '1000' }] },
      ]);
      expect(c.by_code.map((e: { key: string; count: number }) => [e.key, e.count])).to.deep.equal([
        [s1.code, 2],
        [s2.code, 2],
        [s3.code, 1],
      ]);
      expect(c.by_code[1].amounts).to.deep.equal([
        { currency: 'EUR', amount: '2.25' },
        { currency: 'USD', amount: '5.00' },
      ]);
    });

    it('the brand scope lists its codes; the code scope has no lists', async () => {
      const b = (await svc.get(`/v1/analytics?brand_ulid=${brand}`, x.token)).body.data.conversions;
      expect(b.count).to.equal(4);
      expect(b.by_brand).to.equal(undefined);
      expect(b.by_code.map((e: { key: string }) => e.key)).to.deep.equal([s1.code, s2.code]);
      const one = (await svc.get(`/v1/analytics?code_ulid=${s3.code}`, x.token)).body.data.conversions;
      expect(one).to.deep.equal({ count: 1, unique_visitors: 1, amounts: [{ currency: 'JPY', amount: '1000' }] });
    });

    it('csv_rows put conversions and amounts per currency beside the scans of their scan’s day and value; CSV alike', async () => {
      const data = (await svc.get('/v1/analytics/export?range=7&dimension=device', x.token)).body.data;
      const today = new Date().toISOString().slice(0, 10);
      expect(data.csv_rows).to.deep.equal([
        {
          date: today,
          device: 'Desktop',
          scans: 2,
          conversions: 3,
          conversion_amount_EUR: '10.00',
          conversion_amount_JPY: '1000',
          conversion_amount_USD: '0.00',
        },
        {
          date: today,
          device: 'Mobile',
          scans: 1,
          conversions: 2,
          conversion_amount_EUR: '2.25',
          conversion_amount_JPY: '0',
          conversion_amount_USD: '5.00',
        },
      ]);
      const csv = await svc.get('/v1/analytics/export?range=7&dimension=device', x.token, { Accept: 'text/csv' });
      expect(csv.text.split('\n')[0]).to.equal(
        'date,device,scans,conversions,conversion_amount_EUR,conversion_amount_JPY,conversion_amount_USD',
      );
      const parsed = parse(csv.text, { columns: true }) as Record<string, string>[];
      expect(parsed).to.deep.equal(
        data.csv_rows.map((r: Record<string, string | number>) =>
          Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])),
        ),
      );
      // The brand's export: only its conversions.
      const b = (await svc.get(`/v1/analytics/export?range=7&dimension=device&brand_ulid=${brand}`, x.token)).body.data;
      expect(b.csv_rows.map((r: Record<string, unknown>) => [r.device, r.conversions])).to.deep.equal([
        ['Desktop', 2],
        ['Mobile', 2],
      ]);
      // Consent outcomes are not on a conversion: that export has no conversion columns.
      const consent = await svc.get('/v1/analytics/export?dimension=consent', x.token, { Accept: 'text/csv' });
      expect(consent.text.split('\n')[0]).to.equal('date,consent,scans');
    });

    it('the conversions export pages a code’s conversions with their scan’s visitor and values, as JSON or CSV', async () => {
      const first = await svc.get(`/v1/analytics/qr-codes/${s2.code}/conversions-export?limit=1`, x.token);
      expect(first.status, first.text).to.equal(200);
      expect(first.body.data.meta).to.deep.equal({ count: 1, limit: 1, offset: 0, has_more: true });
      const second = await svc.get(`/v1/analytics/qr-codes/${s2.code}/conversions-export?limit=1&offset=1`, x.token);
      expect(second.body.data.meta.has_more).to.equal(false);
      const rows = [...first.body.data.rows, ...second.body.data.rows];
      expect(rows.map((r) => [r.scan_id, r.external_id, r.amount, r.currency])).to.have.deep.members([
        [s2.scanId, null, '2.25', 'EUR'],
        [s2.scanId, 'b', '5.00', 'USD'],
      ]);
      // The visitor and values of the scan as the raw export shows them.
      const raw = (await svc.get(`/v1/analytics/qr-codes/${s2.code}/raw-export`, x.token)).body.data.rows[0];
      expect(raw.scan_id).to.equal(s2.scanId);
      for (const r of rows) {
        expect(r).to.include({
          visitor_id: raw.visitor_id,
          country: raw.country,
          device_type: 'mobile',
          referrer: raw.referrer,
          language: raw.language,
        });
      }
      const csv = await svc.get(`/v1/analytics/qr-codes/${s1.code}/conversions-export`, x.token, {
        Accept: 'text/csv',
      });
      expect(csv.headers.get('x-has-more')).to.equal('false');
      const parsed = parse(csv.text, { columns: true }) as Record<string, string>[];
      expect(parsed.map((r) => r.event).sort()).to.deep.equal(['lead', 'sale']);
      expect(csv.text.split('\n')[0]).to.equal(
        'ulid,created_at,scan_id,scanned_at,event,external_id,amount,currency,visitor_id,country,device_type,referrer,language,provider',
      );
    });

    it('MCP: the analytics tools carry the same conversions, organization_read the pixel_consent setting', async () => {
      const rest = (await svc.get('/v1/analytics', x.token)).body.data.conversions;
      expect((await toolOk(svc, x.token, 'analytics_read', {})).data.conversions).to.deep.equal(rest);
      const exported = await toolOk(svc, x.token, 'analytics_export', { range: 7, dimension: 'device' });
      expect(exported.data.csv_rows.map((r: { conversions: number }) => r.conversions)).to.deep.equal([3, 2]);
      const perCode = await toolOk(svc, x.token, 'analytics_code_read', { code_ulid: s3.code });
      expect(perCode.data.conversions.amounts).to.deep.equal([{ currency: 'JPY', amount: '1000' }]);
      expect((await toolOk(svc, x.token, 'organization_read')).data.pixel_consent).to.equal('required');
    });

    it('another organization sees none of them and cannot read the brand’s or the code’s', async () => {
      const c = (await svc.get('/v1/analytics', b.token)).body.data.conversions;
      expect(c).to.deep.include({ count: 0, by_brand: [], by_code: [] });
      expect((await svc.get(`/v1/analytics?brand_ulid=${brand}`, b.token)).status).to.equal(404);
      expect((await svc.get(`/v1/analytics/qr-codes/${s1.code}/conversions-export`, b.token)).status).to.equal(404);
      const rows = (await svc.get('/v1/analytics/export?range=7&dimension=device', b.token)).body.data.csv_rows;
      expect(rows.every((r: { conversions: number }) => r.conversions === 0)).to.equal(true);
    });
  });
});
