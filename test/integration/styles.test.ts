import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const CONFIG = {
  dotsOptions: { type: 'rounded', color: '#101010' },
  cornersSquareOptions: { type: 'extra-rounded' },
  margin: 24,
};

describe('QR styles: /v1/qr-styles', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let brandA: { ulid: string; name: string };
  let brandB: { ulid: string; name: string };

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    brandA = (await svc.post('/v1/brands', a.token, { name: 'Brand A' })).body.data;
    brandB = (await svc.post('/v1/brands', b.token, { name: 'Brand B' })).body.data;
  });
  after(() => svc?.close());
  afterEach(() => svc.clock.reset());

  async function create(org: TestOrg, body: Record<string, unknown>) {
    const res = await svc.post('/v1/qr-styles', org.token, body);
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }
  const styleCount = async () => Number((await svc.app.db('qr_styles').count<{ c: number }[]>('* as c'))[0].c);

  describe('POST /v1/qr-styles', () => {
    it('creates a style with a brand and the preset flag', async () => {
      svc.clock.set('2026-05-01T07:30:00.000Z');
      const res = await svc.post('/v1/qr-styles', a.token, {
        name: 'Rounded dark',
        config: CONFIG,
        brand_ulid: brandA.ulid,
        is_preset: true,
      });
      expect(res.status).to.equal(201);
      const style = res.body.data;
      expect(style.ulid).to.match(ULID_RE);
      expect(style).to.deep.equal({
        ulid: style.ulid,
        name: 'Rounded dark',
        config: CONFIG,
        is_preset: true,
        // margin 24 px at the default width of 300: a quiet zone of about 3 modules
        scannability: {
          verdict: 'warn',
          check: 'full',
          decoded: true,
          decoders: ['zxing-cpp', 'jsqr', 'zbar'],
          misses: [],
          print: { size_mm: 20, distance_mm: 200 },
          robustness_margin: 1,
          smallest_print_size_mm: 20,
          contrast_ratio: 19.02,
          quiet_zone_modules: 3.14,
          logo_coverage: 0,
          logo_area: 0,
          error_correction: 'Q',
          reasons: ['quiet_zone_narrow'],
        },
        brand: { ulid: brandA.ulid, name: 'Brand A' },
        created_at: '2026-05-01T07:30:00.000Z',
        updated_at: '2026-05-01T07:30:00.000Z',
      });
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).body.data).to.deep.equal(style);
    });

    it('defaults is_preset to false and brand to null', async () => {
      const style = await create(a, { name: 'Plain', config: {} });
      expect(style).to.deep.include({ is_preset: false, brand: null, config: {} });
    });

    it('refuses another organization’s brand and an unknown brand', async () => {
      for (const ulid of [brandB.ulid, '01HZZZZZZZZZZZZZZZZZZZZZZZ']) {
        const before = await styleCount();
        const res = await svc.post('/v1/qr-styles', a.token, { name: 'x', config: {}, brand_ulid: ulid });
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.deep.equal({ brand_ulid: ['No such brand in this organization.'] });
        expect(await styleCount()).to.equal(before);
      }
    });

    const invalid: [string, unknown, string[]][] = [
      ['a missing name and config', {}, ['config', 'name']],
      ['a missing config', { name: 'x' }, ['config']],
      ['a missing name', { config: {} }, ['name']],
      ['a blank name', { name: ' ', config: {} }, ['name']],
      ['a name of 256 characters', { name: 'n'.repeat(256), config: {} }, ['name']],
      ['a string config', { name: 'x', config: 'dots' }, ['config']],
      ['an array config', { name: 'x', config: [] }, ['config']],
      ['a null config', { name: 'x', config: null }, ['config']],
      ['a non-boolean is_preset', { name: 'x', config: {}, is_preset: 'yes' }, ['is_preset']],
      ['a malformed brand_ulid', { name: 'x', config: {}, brand_ulid: 'brand-a' }, ['brand_ulid']],
      ['an unknown field', { name: 'x', config: {}, deleted_at: null }, ['deleted_at']],
      ['a NUL character in a config key', { name: 'x', config: { 'a\u0000': 1 } }, ['config.a\u0000']],
      ['an unpaired surrogate in the name', { name: '\ud83d', config: {} }, ['name']],
    ];
    for (const [what, body, fields] of invalid) {
      it(`refuses ${what} with 422 and creates nothing`, async () => {
        const before = await styleCount();
        const res = await svc.post('/v1/qr-styles', a.token, body);
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(Object.keys(res.body.errors).sort()).to.deep.equal(fields);
        expect(await styleCount()).to.equal(before);
      });
    }
  });

  describe('GET /v1/qr-styles', () => {
    it('lists the organization’s styles, filters by brand and pages', async () => {
      const org = await svc.createOrg();
      const brand = (await svc.post('/v1/brands', org.token, { name: 'Filter' })).body.data;
      const s1 = await create(org, { name: 's1', config: { width: 301 } });
      const s2 = await create(org, { name: 's2', config: { width: 302 }, brand_ulid: brand.ulid });
      const s3 = await create(org, { name: 's3', config: { width: 303 }, brand_ulid: brand.ulid });
      await create(b, { name: 'theirs', config: {} });

      const all = await svc.get('/v1/qr-styles', org.token);
      expect(all.status).to.equal(200);
      expect(all.body).to.deep.equal({ data: [s1, s2, s3], meta: { next_cursor: null } });

      const filtered = await svc.get(`/v1/qr-styles?brand_ulid=${brand.ulid}`, org.token);
      expect(filtered.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['s2', 's3']);

      const p1 = await svc.get(`/v1/qr-styles?brand_ulid=${brand.ulid}&limit=1`, org.token);
      expect(p1.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['s2']);
      const p2 = await svc.get(
        `/v1/qr-styles?brand_ulid=${brand.ulid}&limit=1&cursor=${p1.body.meta.next_cursor}`,
        org.token,
      );
      expect(p2.body.data.map((s: { name: string }) => s.name)).to.deep.equal(['s3']);
      expect(p2.body.meta.next_cursor).to.equal(null);
    });

    it('refuses a brand filter of another organization, a malformed one and a bad limit', async () => {
      const cases: [string, string][] = [
        [`brand_ulid=${brandB.ulid}`, 'brand_ulid'],
        ['brand_ulid=nope', 'brand_ulid'],
        ['limit=0', 'limit'],
        ['cursor=%21%21', 'cursor'],
      ];
      for (const [q, field] of cases) {
        const res = await svc.get(`/v1/qr-styles?${q}`, a.token);
        expect(res.status, q).to.equal(422);
        expect(Object.keys(res.body.errors), q).to.deep.equal([field]);
      }
    });
  });

  describe('PATCH /v1/qr-styles/{style_ulid}', () => {
    it('changes only the keys given; config is replaced and brand_ulid null clears', async () => {
      svc.clock.set('2026-05-02T10:00:00.000Z');
      const style = await create(a, { name: 'Before', config: { width: 400, margin: 40 }, brand_ulid: brandA.ulid });
      svc.clock.set('2026-05-02T11:00:00.000Z');
      const r1 = await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, { name: 'After' });
      expect(r1.status).to.equal(200);
      expect(r1.body.data).to.deep.equal({ ...style, name: 'After', updated_at: '2026-05-02T11:00:00.000Z' });
      const r2 = await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, {
        config: { height: 320 },
        is_preset: true,
        brand_ulid: null,
      });
      expect(r2.body.data).to.deep.include({ name: 'After', config: { height: 320 }, is_preset: true, brand: null });
      const r3 = await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, { brand_ulid: brandA.ulid });
      expect(r3.body.data.brand).to.deep.equal({ ulid: brandA.ulid, name: 'Brand A' });
    });

    it('refuses invalid values with 422 and changes nothing', async () => {
      const style = await create(a, { name: 'Stable', config: { width: 310 } });
      const cases: [unknown, string][] = [
        [{ name: null }, 'name'],
        [{ name: '' }, 'name'],
        [{ config: null }, 'config'],
        [{ config: 'x' }, 'config'],
        [{ is_preset: 1 }, 'is_preset'],
        [{ brand_ulid: brandB.ulid }, 'brand_ulid'],
        [{ brand_ulid: 'x' }, 'brand_ulid'],
        [{ org_id: 2 }, 'org_id'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(Object.keys(res.body.errors), JSON.stringify(body)).to.deep.equal([field]);
      }
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).body.data).to.deep.equal(style);
    });
  });

  describe('DELETE /v1/qr-styles/{style_ulid}', () => {
    it('soft-deletes: 204, then 404 on every verb and gone from the list, the row kept', async () => {
      const style = await create(a, { name: 'Doomed', config: {} });
      svc.clock.set('2026-05-03T00:00:00.000Z');
      const res = await svc.delete(`/v1/qr-styles/${style.ulid}`, a.token);
      expect(res.status).to.equal(204);
      expect(res.text).to.equal('');
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).status).to.equal(404);
      expect((await svc.patch(`/v1/qr-styles/${style.ulid}`, a.token, { name: 'back' })).status).to.equal(404);
      expect((await svc.delete(`/v1/qr-styles/${style.ulid}`, a.token)).status).to.equal(404);
      const list = (await svc.get('/v1/qr-styles', a.token)).body.data as { ulid: string }[];
      expect(list.map((s) => s.ulid)).to.not.include(style.ulid);
      const row = await svc.app.db('qr_styles').where({ ulid: style.ulid }).first('deleted_at', 'name');
      expect(row.name).to.equal('Doomed');
      expect(row.deleted_at.toISOString()).to.equal('2026-05-03T00:00:00.000Z');
    });

    it('answers 422 for a malformed ULID and 404 for an unknown one', async () => {
      expect((await svc.delete('/v1/qr-styles/abc', a.token)).status).to.equal(422);
      expect((await svc.get('/v1/qr-styles/abc', a.token)).status).to.equal(422);
      const missing = await svc.delete('/v1/qr-styles/01HZZZZZZZZZZZZZZZZZZZZZZZ', a.token);
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('not_found');
    });
  });

  describe('isolation between organizations', () => {
    it('answers 404 to GET, PATCH and DELETE of another organization’s style and changes nothing', async () => {
      const style = await create(a, { name: 'Private', config: { width: 320 } });
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, b.token)).status).to.equal(404);
      expect((await svc.patch(`/v1/qr-styles/${style.ulid}`, b.token, { name: 'Hijacked' })).status).to.equal(404);
      expect((await svc.delete(`/v1/qr-styles/${style.ulid}`, b.token)).status).to.equal(404);
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, a.token)).body.data).to.deep.equal(style);
      const list = (await svc.get('/v1/qr-styles', b.token)).body.data as { ulid: string }[];
      expect(list.map((s) => s.ulid)).to.not.include(style.ulid);
    });
  });

  describe('abilities', () => {
    it('requires styles.manage for every endpoint', async () => {
      const style = await create(a, { name: 'Guarded', config: {} });
      const viewer = await svc.createToken(a.org, { role: 'viewer' });
      const other = await svc.createToken(a.org, { abilities: ['codes.view', 'brands.manage', 'domains.manage'] });
      const calls: [string, string, unknown][] = [
        ['GET', '/v1/qr-styles', undefined],
        ['POST', '/v1/qr-styles', { name: 'no', config: {} }],
        ['GET', `/v1/qr-styles/${style.ulid}`, undefined],
        ['PATCH', `/v1/qr-styles/${style.ulid}`, { name: 'no' }],
        ['DELETE', `/v1/qr-styles/${style.ulid}`, undefined],
      ];
      for (const token of [viewer, other]) {
        for (const [method, path, body] of calls) {
          const res = await svc.request(method, path, { token, body });
          expect(res.status, `${method} ${path}`).to.equal(403);
          expect(res.body).to.include({ code: 'forbidden', required_ability: 'styles.manage' });
        }
      }
      const editor = await svc.createToken(a.org, { role: 'editor' });
      expect((await svc.get(`/v1/qr-styles/${style.ulid}`, editor)).body.data).to.deep.equal(style);
    });
  });
});
