import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { insertScanEvents, type ScanEvent } from '../../server/analytics/synthetic-scans.js';
import { rawTotals, rollupDaily } from '../../server/analytics/queries.js';
import { fallbackDomain, makeBrand, makeCode, scanRow } from '../helpers/fixtures.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

// A hand-made dataset. "Today" is 2026-03-15 (the clock is fixed at noon); range 7 is
// 2026-03-09 .. 2026-03-15. Visitors are numbered; v2 scans two codes of different brands.
//
//   code  brand  time (UTC)                 country device  lang provider  referrer      visitor
//   C1    B1     2026-03-08T23:59:59.999Z   DE      mobile  de   Telekom   -             v1   (outside 7 days, inside 30)
//   C1    B1     2026-03-09T00:00:00.000Z   DE      mobile  de   Telekom   -             v1
//   C1    B1     2026-03-09T10:00:00.000Z   US      desktop en   Comcast   google.com    v2
//   C1    B1     2026-03-11T08:00:00.000Z   DE      mobile  de   Telekom   -             v1
//   C1    B1     2026-03-11T09:00:00.000Z   US      bot     en   -         -             v9   (bot: left out)
//   C1    B1     2026-03-15T23:59:59.999Z   FR      tablet  fr   Orange    facebook.com  v3
//   C2    B1     2026-03-12T12:00/13:00     DE      mobile  de   Vodafone  -             v4 (twice)
//   C2    B1     2026-03-12T14:00:00.000Z   -       other   -    -         -             v5
//   C3    B2     2026-03-13T00:00:00.000Z   US      mobile  en   Verizon   google.com    v2
//   C3    B2     2026-03-14T00:00:00.000Z   GB      desktop en   BT        -             v6
//   C4    -      2026-03-15T06:00:00.000Z   DE      desktop de   Telekom   -             v7
//   C4    -      2026-03-16T00:00:00.000Z   DE      desktop de   Telekom   -             v8   (tomorrow: outside)
//   other organization: 3 scans on 2026-03-12 (must never show up)
const NOW = '2026-03-15T12:00:00.000Z';

interface Code {
  id: number;
  ulid: string;
  brandId: number;
}

describe('Scan analytics API', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  const brands: Record<string, { id: number; ulid: string }> = {};
  const codes: Record<string, Code> = {};
  const other: { brand?: { id: number; ulid: string }; code?: Code } = {};

  function ev(org: TestOrg, code: Code, iso: string, d: Partial<ScanEvent> & { visitor: number }): ScanEvent {
    return scanRow(Date.parse(iso), {
      org_id: org.org.id,
      brand_id: code.brandId,
      code_id: code.id,
      visitor_hash: String(1000 + d.visitor),
      country: d.country ?? '',
      device_type: d.device_type ?? 'other',
      referrer: d.referrer ?? '',
      language: d.language ?? '',
      provider: d.provider ?? '',
      is_bot: d.is_bot ?? 0,
      matched_rule: d.matched_rule ?? -1,
    });
  }

  before(async () => {
    svc = await startTestService();
    svc.clock.set(NOW);
    a = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'acme' });
    b = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'globex' });
    const domain = await fallbackDomain(svc.app);
    brands.B1 = await makeBrand(svc.app, a.org, { name: 'Coffee', slug: 'coffee' });
    brands.B2 = await makeBrand(svc.app, a.org, { name: 'Books', slug: 'books' });
    const code = async (org: TestOrg, slug: string, name: string | null, brand?: { id: number; ulid: string }) => ({
      ...(await makeCode(svc.app, org.org, { slug, name, brand, domain })),
      brandId: brand?.id ?? 0,
    });
    codes.C1 = await code(a, 'menu', 'Menu', brands.B1);
    codes.C2 = await code(a, 'loyalty', null, brands.B1);
    codes.C3 = await code(a, 'catalog', 'Catalog', brands.B2);
    codes.C4 = await code(a, 'card', 'Business card');
    other.brand = await makeBrand(svc.app, b.org, { name: 'Other', slug: 'other' });
    other.code = await code(b, 'menu', 'Other menu', other.brand);
    const { C1, C2, C3, C4 } = codes;
    const de = { country: 'DE', language: 'de' };
    await insertScanEvents(svc.app.ch, [
      ev(a, C1, '2026-03-08T23:59:59.999Z', { ...de, device_type: 'mobile', provider: 'Telekom', visitor: 1 }),
      ev(a, C1, '2026-03-09T00:00:00.000Z', {
        ...de,
        device_type: 'mobile',
        provider: 'Telekom',
        visitor: 1,
        matched_rule: 0,
      }),
      ev(a, C1, '2026-03-09T10:00:00.000Z', {
        country: 'US',
        language: 'en',
        device_type: 'desktop',
        provider: 'Comcast',
        referrer: 'google.com',
        visitor: 2,
      }),
      ev(a, C1, '2026-03-11T08:00:00.000Z', { ...de, device_type: 'mobile', provider: 'Telekom', visitor: 1 }),
      ev(a, C1, '2026-03-11T09:00:00.000Z', {
        country: 'US',
        language: 'en',
        device_type: 'bot',
        visitor: 9,
        is_bot: 1,
      }),
      ev(a, C1, '2026-03-15T23:59:59.999Z', {
        country: 'FR',
        language: 'fr',
        device_type: 'tablet',
        provider: 'Orange',
        referrer: 'facebook.com',
        visitor: 3,
      }),
      ev(a, C2, '2026-03-12T12:00:00.000Z', { ...de, device_type: 'mobile', provider: 'Vodafone', visitor: 4 }),
      ev(a, C2, '2026-03-12T13:00:00.000Z', { ...de, device_type: 'mobile', provider: 'Vodafone', visitor: 4 }),
      ev(a, C2, '2026-03-12T14:00:00.000Z', { device_type: 'other', visitor: 5 }),
      ev(a, C3, '2026-03-13T00:00:00.000Z', {
        country: 'US',
        language: 'en',
        device_type: 'mobile',
        provider: 'Verizon',
        referrer: 'google.com',
        visitor: 2,
      }),
      ev(a, C3, '2026-03-14T00:00:00.000Z', {
        country: 'GB',
        language: 'en',
        device_type: 'desktop',
        provider: 'BT',
        visitor: 6,
      }),
      ev(a, C4, '2026-03-15T06:00:00.000Z', { ...de, device_type: 'desktop', provider: 'Telekom', visitor: 7 }),
      ev(a, C4, '2026-03-16T00:00:00.000Z', { ...de, device_type: 'desktop', provider: 'Telekom', visitor: 8 }),
      ...[1, 2, 3].map((h) =>
        ev(b, other.code!, `2026-03-12T0${h}:00:00.000Z`, { ...de, device_type: 'mobile', visitor: 1 }),
      ),
    ]);
  });
  after(() => svc?.close());
  // Every test in its own rate-limit minute (the raw export allows 6 a minute); noon leaves the day intact.
  beforeEach(() => svc.clock.advance(61_000));

  describe('GET /v1/analytics', () => {
    it('reports organization totals, every day of the last 7 UTC days, the country breakdown and the top codes with bots left out', async () => {
      const res = await svc.get('/v1/analytics?range=7&dimension=country', a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        scope_level: 'organization',
        range_days: 7,
        totals: { scans: 10, uniques: 7, unique_rate: 0.7 },
        conversions: { count: 0, unique_visitors: 0, amounts: [], by_brand: [], by_code: [] },
        time_series: [
          { date: '2026-03-09', scans: 2 },
          { date: '2026-03-10', scans: 0 },
          { date: '2026-03-11', scans: 1 },
          { date: '2026-03-12', scans: 3 },
          { date: '2026-03-13', scans: 1 },
          { date: '2026-03-14', scans: 1 },
          { date: '2026-03-15', scans: 2 },
        ],
        dimension: 'country',
        dimension_label: 'Country',
        dimension_breakdown: [
          { key: 'DE', label: 'Germany', scans: 5, uniques: 3 },
          { key: 'US', label: 'United States', scans: 2, uniques: 1 },
          { key: '', label: 'Unknown', scans: 1, uniques: 1 },
          { key: 'FR', label: 'France', scans: 1, uniques: 1 },
          { key: 'GB', label: 'United Kingdom', scans: 1, uniques: 1 },
        ],
        child_breakdown: [
          { key: brands.B1.ulid, label: 'Coffee', scans: 7, uniques: 5 },
          { key: brands.B2.ulid, label: 'Books', scans: 2, uniques: 2 },
          { key: '', label: 'No brand', scans: 1, uniques: 1 },
        ],
        top_codes: [
          { key: codes.C1.ulid, label: 'Menu', scans: 4, uniques: 3 },
          { key: codes.C2.ulid, label: 'acme/loyalty', scans: 3, uniques: 2 },
          { key: codes.C3.ulid, label: 'Catalog', scans: 2, uniques: 2 },
          { key: codes.C4.ulid, label: 'Business card', scans: 1, uniques: 1 },
        ],
      });
    });

    it('counts a scan at 23:59:59.999 UTC on its own day and one at 00:00:00.000 on the next', async () => {
      const week = (await svc.get('/v1/analytics?range=7', a.token)).body.data;
      const month = (await svc.get('/v1/analytics?range=30', a.token)).body.data;
      // 2026-03-08T23:59:59.999Z is the day before the 7-day range; 2026-03-09T00:00:00.000Z its first day.
      expect(month.time_series.find((d: { date: string }) => d.date === '2026-03-08')).to.deep.equal({
        date: '2026-03-08',
        scans: 1,
      });
      expect(week.time_series[0]).to.deep.equal({ date: '2026-03-09', scans: 2 });
      // Today's last millisecond is in; tomorrow's first one is not.
      expect(week.time_series[6]).to.deep.equal({ date: '2026-03-15', scans: 2 });
      expect(month.totals).to.deep.equal({ scans: 11, uniques: 7, unique_rate: 7 / 11 });
      expect(month.time_series).to.have.length(30);
      expect(month.time_series[0].date).to.equal('2026-02-14');
      expect(month.time_series.reduce((s: number, d: { scans: number }) => s + d.scans, 0)).to.equal(11);
    });

    it('defaults to 30 days and the country dimension', async () => {
      const res = await svc.get('/v1/analytics', a.token);
      expect(res.body.data.range_days).to.equal(30);
      expect(res.body.data.dimension).to.equal('country');
      expect(res.body.data.totals.scans).to.equal(11);
    });

    it('breaks down by device, language and referrer with readable labels and distinct visitors per value', async () => {
      const get = async (dim: string) => (await svc.get(`/v1/analytics?range=7&dimension=${dim}`, a.token)).body.data;
      const device = await get('device');
      expect(device.dimension_label).to.equal('Device type');
      expect(device.dimension_breakdown).to.deep.equal([
        { key: 'mobile', label: 'Mobile', scans: 5, uniques: 3 },
        { key: 'desktop', label: 'Desktop', scans: 3, uniques: 3 },
        { key: 'other', label: 'Other', scans: 1, uniques: 1 },
        { key: 'tablet', label: 'Tablet', scans: 1, uniques: 1 },
      ]);
      const language = await get('language');
      expect(language.dimension_label).to.equal('Language');
      expect(language.dimension_breakdown).to.deep.equal([
        { key: 'de', label: 'German', scans: 5, uniques: 3 },
        { key: 'en', label: 'English', scans: 3, uniques: 2 },
        { key: '', label: 'Unknown', scans: 1, uniques: 1 },
        { key: 'fr', label: 'French', scans: 1, uniques: 1 },
      ]);
      const referrer = await get('referrer');
      expect(referrer.dimension_breakdown).to.deep.equal([
        { key: '', label: 'Direct', scans: 7, uniques: 5 },
        { key: 'google.com', label: 'google.com', scans: 2, uniques: 1 },
        { key: 'facebook.com', label: 'facebook.com', scans: 1, uniques: 1 },
      ]);
    });

    it('scopes to a brand and lists its codes as children', async () => {
      const res = await svc.get(`/v1/analytics?range=7&brand_ulid=${brands.B1.ulid}`, a.token);
      expect(res.status).to.equal(200);
      const d = res.body.data;
      expect(d.scope_level).to.equal('brand');
      expect(d.totals).to.deep.equal({ scans: 7, uniques: 5, unique_rate: 5 / 7 });
      expect(d.time_series.map((x: { scans: number }) => x.scans)).to.deep.equal([2, 0, 1, 3, 0, 0, 1]);
      expect(d.child_breakdown).to.deep.equal([
        { key: codes.C1.ulid, label: 'Menu', scans: 4, uniques: 3 },
        { key: codes.C2.ulid, label: 'acme/loyalty', scans: 3, uniques: 2 },
      ]);
    });

    it('scopes to a code without a child breakdown', async () => {
      const res = await svc.get(`/v1/analytics?range=7&code_ulid=${codes.C3.ulid}&dimension=country`, a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data.scope_level).to.equal('code');
      expect(res.body.data.totals).to.deep.equal({ scans: 2, uniques: 2, unique_rate: 1 });
      expect(res.body.data).not.to.have.property('child_breakdown');
      expect(res.body.data.dimension_breakdown.map((x: { key: string }) => x.key)).to.deep.equal(['GB', 'US']);
    });

    it('answers 404 for a code that is not in the given brand', async () => {
      const res = await svc.get(`/v1/analytics?brand_ulid=${brands.B1.ulid}&code_ulid=${codes.C3.ulid}`, a.token);
      expect(res.status).to.equal(404);
    });

    it('reports zeros, with unique_rate 0, and every day for a brand without scans', async () => {
      const empty = await makeBrand(svc.app, a.org, { name: 'Empty', slug: 'empty' });
      const d = (await svc.get(`/v1/analytics?range=7&brand_ulid=${empty.ulid}`, a.token)).body.data;
      expect(d.totals).to.deep.equal({ scans: 0, uniques: 0, unique_rate: 0 });
      expect(d.time_series).to.have.length(7);
      expect(d.time_series.every((x: { scans: number }) => x.scans === 0)).to.equal(true);
      expect(d.dimension_breakdown).to.deep.equal([]);
      expect(d.child_breakdown).to.deep.equal([]);
    });

    for (const [query, field] of [
      ['range=14', 'range'],
      ['range=abc', 'range'],
      ['dimension=provider', 'dimension'],
      ['dimension=platform', 'dimension'],
      ['brand_ulid=nope', 'brand_ulid'],
      ['colour=red', 'colour'],
    ]) {
      it(`answers 422 with a field error for ${query}`, async () => {
        const res = await svc.get(`/v1/analytics?${query}`, a.token);
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(res.body.errors).to.have.property(field);
      });
    }
  });

  describe('include_bots', () => {
    it('counts the bot scan in the organization, brand and code payloads only with include_bots=true', async () => {
      const week = (q: string) => svc.get(`/v1/analytics?range=7${q}`, a.token);
      const without = (await week('&dimension=device')).body.data;
      const withBots = (await week('&dimension=device&include_bots=true')).body.data;
      expect(without.totals).to.deep.equal({ scans: 10, uniques: 7, unique_rate: 0.7 });
      expect(withBots.totals).to.deep.equal({ scans: 11, uniques: 8, unique_rate: 8 / 11 });
      expect(withBots.time_series[2]).to.deep.equal({ date: '2026-03-11', scans: 2 });
      expect(withBots.dimension_breakdown).to.deep.include({ key: 'bot', label: 'Bot', scans: 1, uniques: 1 });
      expect(without.dimension_breakdown.map((e: { key: string }) => e.key)).not.to.include('bot');
      expect(withBots.child_breakdown[0]).to.deep.equal({ key: brands.B1.ulid, label: 'Coffee', scans: 8, uniques: 6 });
      expect(withBots.top_codes[0]).to.deep.equal({ key: codes.C1.ulid, label: 'Menu', scans: 5, uniques: 4 });
      expect((await week('&include_bots=false')).body.data.totals.scans).to.equal(10);
      const code = (q: string) => svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}?range=7${q}`, a.token);
      expect((await code('')).body.data.totals.scans).to.equal(4);
      expect((await code('&include_bots=true')).body.data.totals).to.deep.equal({
        scans: 5,
        uniques: 4,
        unique_rate: 0.8,
      });
    });

    it('lists the bot scan in the raw export only with include_bots=true, with device_type bot', async () => {
      const url = `/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=7&include_bots=true`;
      const rows = (await svc.get(url, a.token)).body.data.rows;
      expect(rows.map((r: { scanned_at: string }) => r.scanned_at)).to.deep.equal([
        '2026-03-09T00:00:00.000Z',
        '2026-03-09T10:00:00.000Z',
        '2026-03-11T08:00:00.000Z',
        '2026-03-11T09:00:00.000Z',
        '2026-03-15T23:59:59.999Z',
      ]);
      expect(rows[3].device_type).to.equal('bot');
    });

    it('answers 422 for include_bots that is not true or false', async () => {
      const res = await svc.get('/v1/analytics?include_bots=yes', a.token);
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.have.property('include_bots');
    });
  });

  describe('GET /v1/analytics/qr-codes/{code_ulid}', () => {
    it('reports one code from the daily rollup, with the provider dimension', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}?range=7&dimension=provider`, a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        qr_code: { ulid: codes.C1.ulid, name: 'Menu', slug: 'acme/menu' },
        range_days: 7,
        totals: { scans: 4, uniques: 3, unique_rate: 0.75 },
        conversions: { count: 0, unique_visitors: 0, amounts: [] },
        time_series: [
          { date: '2026-03-09', scans: 2 },
          { date: '2026-03-10', scans: 0 },
          { date: '2026-03-11', scans: 1 },
          { date: '2026-03-12', scans: 0 },
          { date: '2026-03-13', scans: 0 },
          { date: '2026-03-14', scans: 0 },
          { date: '2026-03-15', scans: 1 },
        ],
        dimension: 'provider',
        dimension_label: 'Network provider',
        dimension_breakdown: [
          { key: 'Telekom', label: 'Telekom', scans: 2, uniques: 1 },
          { key: 'Comcast', label: 'Comcast', scans: 1, uniques: 1 },
          { key: 'Orange', label: 'Orange', scans: 1, uniques: 1 },
        ],
      });
    });

    it('answers 422 for an unknown dimension', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}?dimension=platform`, a.token);
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.have.property('dimension');
    });

    it('answers 404 for a code that does not exist', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${ulid()}`, a.token);
      expect(res.status).to.equal(404);
    });
  });

  describe('GET /v1/analytics/qr-codes/{code_ulid}/raw-export', () => {
    it('lists a code’s scans in time order, bots left out, with the day boundaries of the range', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=7`, a.token);
      expect(res.status).to.equal(200);
      const d = res.body.data;
      expect(d.qr_code).to.deep.equal({ ulid: codes.C1.ulid, slug: 'acme/menu' });
      expect(d.rows.map((r: { scanned_at: string }) => r.scanned_at)).to.deep.equal([
        '2026-03-09T00:00:00.000Z',
        '2026-03-09T10:00:00.000Z',
        '2026-03-11T08:00:00.000Z',
        '2026-03-15T23:59:59.999Z',
      ]);
      expect(d.rows[0]).to.include({
        country: 'DE',
        device_type: 'mobile',
        referrer: '',
        language: 'de',
        provider: 'Telekom',
        visitor_id: (1001).toString(16).padStart(16, '0'),
        matched_rule: 0,
      });
      expect(d.rows[1].matched_rule).to.equal(null);
      expect(d.meta).to.deep.equal({ count: 4, limit: 1000, offset: 0, has_more: false, next_cursor: null });
    });

    it('pages with limit and offset, telling whether more rows follow', async () => {
      const url = `/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=7&limit=3`;
      const first = (await svc.get(url, a.token)).body.data;
      expect(first.rows).to.have.length(3);
      expect(first.meta).to.include({ count: 3, limit: 3, offset: 0, has_more: true });
      const second = (await svc.get(`${url}&offset=3`, a.token)).body.data;
      expect(second.rows.map((r: { scanned_at: string }) => r.scanned_at)).to.deep.equal(['2026-03-15T23:59:59.999Z']);
      expect(second.meta).to.deep.equal({ count: 1, limit: 3, offset: 3, has_more: false, next_cursor: null });
    });

    it('pages through a keyset cursor to the same rows in the same order as offsets', async () => {
      const base = `/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=30&limit=2`;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        svc.clock.advance(61_000);
        const data: any = (await svc.get(cursor ? `${base}&cursor=${cursor}` : base, a.token)).body.data;
        seen.push(...data.rows.map((r: { scan_id: string }) => r.scan_id));
        cursor = data.meta.next_cursor;
        pages++;
      } while (cursor);
      expect(pages).to.equal(3);
      svc.clock.advance(61_000);
      const all = (await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=30`, a.token)).body.data;
      expect(seen).to.deep.equal(all.rows.map((r: { scan_id: string }) => r.scan_id));
      expect(seen).to.have.length(5);
    });

    for (const [query, field] of [
      ['limit=5001', 'limit'],
      ['limit=0', 'limit'],
      ['offset=-1', 'offset'],
      ['range=1', 'range'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ]) {
      it(`answers 422 for ${query}`, async () => {
        const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?${query}`, a.token);
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.have.property(field);
      });
    }

    it('accepts limit 5000', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?limit=5000`, a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data.meta.limit).to.equal(5000);
    });

    it('answers the 7th raw export within a minute with 429, Retry-After, the help link and the rate-limited body', async () => {
      const url = `/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=7`;
      for (let i = 0; i < 6; i++) expect((await svc.get(url, a.token)).status).to.equal(200);
      const res = await svc.get(url, a.token);
      expect(res.status).to.equal(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      expect(res.headers.get('link')).to.match(/^<[^>]+>; rel="help"; type="text\/html"$/);
      expect(res.body).to.have.all.keys('message', 'code', 'retry_after', 'documentation');
      expect(res.body.retry_after).to.equal(retryAfter);
      // The organization's own window is untouched by the raw-export bucket.
      expect((await svc.get('/v1/analytics?range=7', a.token)).status).to.equal(200);
    });
  });

  describe('raw export order with scans in the same millisecond', () => {
    let c: TestOrg;
    let code: Code;
    const ids = ['01KK0000000000000000000003', '01KK0000000000000000000001', '01KK0000000000000000000002'];
    before(async () => {
      c = await svc.createOrg({ plan: 'enterprise_monthly' });
      code = {
        ...(await makeCode(svc.app, c.org, { slug: 'ties', domain: await fallbackDomain(svc.app) })),
        brandId: 0,
      };
      await insertScanEvents(svc.app.ch, [
        ...ids.map((id, i) => ({ ...ev(c, code, '2026-03-14T10:00:00.000Z', { visitor: i }), scan_id: id })),
        { ...ev(c, code, '2026-03-14T09:59:59.999Z', { visitor: 9 }), scan_id: '01KK0000000000000000000009' },
      ]);
    });

    it('breaks ties by scan_id, through offsets and through the cursor alike', async () => {
      const expected = ['01KK0000000000000000000009', ...[...ids].sort()];
      const byOffset: string[] = [];
      const byCursor: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 4; i++) {
        svc.clock.advance(61_000);
        const url = `/v1/analytics/qr-codes/${code.ulid}/raw-export?range=7&limit=1`;
        const page = (await svc.get(`${url}&offset=${i}`, c.token)).body.data;
        byOffset.push(page.rows[0].scan_id);
        expect(page.meta.has_more).to.equal(i < 3);
        const keyset: any = (await svc.get(cursor ? `${url}&cursor=${cursor}` : url, c.token)).body.data;
        byCursor.push(keyset.rows[0].scan_id);
        cursor = keyset.meta.next_cursor;
      }
      expect(byOffset).to.deep.equal(expected);
      expect(byCursor).to.deep.equal(expected);
      expect(cursor).to.equal(null);
    });
  });

  describe('rollup and raw events agree', () => {
    for (const scope of ['C1', 'C2', 'C3', 'C4']) {
      it(`counts the same scans and visitors for ${scope} from the rollup and from the raw export`, async () => {
        const code = codes[scope];
        const rollup = (await svc.get(`/v1/analytics/qr-codes/${code.ulid}?range=30`, a.token)).body.data;
        const raw = (await svc.get(`/v1/analytics/qr-codes/${code.ulid}/raw-export?range=30`, a.token)).body.data;
        expect(raw.rows.length).to.equal(rollup.totals.scans);
        expect(new Set(raw.rows.map((r: { visitor_id: string }) => r.visitor_id)).size).to.equal(rollup.totals.uniques);
        const perDay = new Map<string, number>();
        for (const r of raw.rows)
          perDay.set(r.scanned_at.slice(0, 10), (perDay.get(r.scanned_at.slice(0, 10)) ?? 0) + 1);
        for (const d of rollup.time_series) expect(d.scans, d.date).to.equal(perDay.get(d.date) ?? 0);
      });
    }

    it('gives the same organization totals from the one-day spans and from scan_events', async () => {
      const f = { orgId: a.org.id, from: '2026-02-14', to: '2026-03-15' };
      expect((await rollupDaily(svc.app.ch, f)).totals).to.deep.equal(await rawTotals(svc.app.ch, f));
      expect((await rollupDaily(svc.app.ch, f)).totals).to.deep.equal({ scans: 11, uniques: 7 });
    });
  });

  describe('GET /v1/analytics/export', () => {
    it('adds csv_rows {date, <dimension>, scans, conversions} per day and value', async () => {
      const res = await svc.get('/v1/analytics/export?range=7&dimension=country', a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data.totals.scans).to.equal(10);
      expect(res.body.data.csv_rows).to.deep.equal([
        { date: '2026-03-09', country: 'Germany', scans: 1, conversions: 0 },
        { date: '2026-03-09', country: 'United States', scans: 1, conversions: 0 },
        { date: '2026-03-11', country: 'Germany', scans: 1, conversions: 0 },
        { date: '2026-03-12', country: 'Germany', scans: 2, conversions: 0 },
        { date: '2026-03-12', country: 'Unknown', scans: 1, conversions: 0 },
        { date: '2026-03-13', country: 'United States', scans: 1, conversions: 0 },
        { date: '2026-03-14', country: 'United Kingdom', scans: 1, conversions: 0 },
        { date: '2026-03-15', country: 'Germany', scans: 1, conversions: 0 },
        { date: '2026-03-15', country: 'France', scans: 1, conversions: 0 },
      ]);
    });

    it('answers Accept: text/csv with the same rows as a CSV file', async () => {
      const json = (await svc.get('/v1/analytics/export?range=30&dimension=device', a.token)).body.data;
      const res = await svc.get('/v1/analytics/export?range=30&dimension=device', a.token, { Accept: 'text/csv' });
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
      expect(res.headers.get('content-disposition')).to.equal(
        'attachment; filename="analytics-organization-30d-device.csv"',
      );
      const parsed = parse(res.text, { columns: true }) as Record<string, string>[];
      expect(res.text.split('\n')[0]).to.equal('date,device,scans,conversions');
      expect(parsed).to.deep.equal(
        json.csv_rows.map((r: Record<string, unknown>) => ({
          date: r.date,
          device: r.device,
          scans: String(r.scans),
          conversions: '0',
        })),
      );
      expect(parsed.reduce((s, r) => s + Number(r.scans), 0)).to.equal(11);
    });

    it('answers the raw export as CSV with the paging meta in headers', async () => {
      const res = await svc.get(`/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export?range=7&limit=3`, a.token, {
        Accept: 'text/csv',
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-has-more')).to.equal('true');
      expect(res.headers.get('x-next-cursor')).to.be.a('string');
      const rows = parse(res.text, { columns: true }) as Record<string, string>[];
      expect(rows.map((r) => r.scanned_at)).to.deep.equal([
        '2026-03-09T00:00:00.000Z',
        '2026-03-09T10:00:00.000Z',
        '2026-03-11T08:00:00.000Z',
      ]);
      expect(rows[1]).to.include({ country: 'US', device_type: 'desktop', referrer: 'google.com', matched_rule: '' });
    });
  });

  describe('isolation between organizations', () => {
    it('never counts another organization’s scans', async () => {
      const res = await svc.get('/v1/analytics?range=7', b.token);
      expect(res.body.data.totals).to.deep.equal({ scans: 3, uniques: 1, unique_rate: 1 / 3 });
      expect(res.body.data.child_breakdown).to.deep.equal([
        { key: other.brand!.ulid, label: 'Other', scans: 3, uniques: 1 },
      ]);
    });

    it('answers 404 for another organization’s brand or code on every analytics endpoint', async () => {
      const paths = [
        `/v1/analytics?brand_ulid=${other.brand!.ulid}`,
        `/v1/analytics?code_ulid=${other.code!.ulid}`,
        `/v1/analytics/export?brand_ulid=${other.brand!.ulid}`,
        `/v1/analytics/export?code_ulid=${other.code!.ulid}`,
        `/v1/analytics/qr-codes/${other.code!.ulid}`,
        `/v1/analytics/qr-codes/${other.code!.ulid}/raw-export`,
      ];
      for (const p of paths) {
        const res = await svc.get(p, a.token);
        expect(res.status, p).to.equal(404);
        expect(res.body.code, p).to.equal('not_found');
      }
    });
  });

  describe('abilities', () => {
    it('needs analytics.view to read and analytics.export to export', async () => {
      const viewOnly = await svc.createToken(a.org, { abilities: ['analytics.view'] });
      const exportOnly = await svc.createToken(a.org, { abilities: ['analytics.export'] });
      const reads = ['/v1/analytics', `/v1/analytics/qr-codes/${codes.C1.ulid}`];
      const exports = ['/v1/analytics/export', `/v1/analytics/qr-codes/${codes.C1.ulid}/raw-export`];
      for (const p of reads) {
        expect((await svc.get(p, viewOnly)).status, p).to.equal(200);
        const res = await svc.get(p, exportOnly);
        expect(res.status, p).to.equal(403);
        expect(res.body.required_ability, p).to.equal('analytics.view');
      }
      for (const p of exports) {
        expect((await svc.get(p, exportOnly)).status, p).to.equal(200);
        const res = await svc.get(p, viewOnly);
        expect(res.status, p).to.equal(403);
        expect(res.body.required_ability, p).to.equal('analytics.export');
      }
    });

    it('lets a viewer read analytics but not export them', async () => {
      const viewer = await svc.createToken(a.org, { role: 'viewer' });
      expect((await svc.get('/v1/analytics', viewer)).status).to.equal(200);
      expect((await svc.get('/v1/analytics/export', viewer)).status).to.equal(403);
    });
  });
});
