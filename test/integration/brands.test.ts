import { expect } from 'chai';
import { ulid } from 'ulid';
import { slugFromName } from '../../server/brands/service.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('brands: /v1/brands', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: { ulid: string; host: string };

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    const d = (await svc.get('/v1/domains', a.token)).body.data[0];
    fallback = { ulid: d.ulid, host: d.host };
  });
  after(() => svc?.close());
  afterEach(() => svc.clock.reset());

  async function create(org: TestOrg, body: Record<string, unknown>) {
    const res = await svc.post('/v1/brands', org.token, body);
    expect(res.status, res.text).to.equal(201);
    return res.body.data;
  }

  async function customDomain(org: TestOrg) {
    const res = await svc.post('/v1/domains', org.token, {
      host: `brand-${Math.random().toString(36).slice(2, 10)}.example.com`,
    });
    expect(res.status).to.equal(201);
    return res.body.data as { ulid: string; host: string };
  }

  const brandCount = async () => Number((await svc.app.db('brands').count<{ c: number }[]>('* as c'))[0].c);

  describe('POST /v1/brands', () => {
    it('creates a brand with every field', async () => {
      svc.clock.set('2026-04-01T12:00:00.000Z');
      const domain = await customDomain(a);
      const res = await svc.post('/v1/brands', a.token, {
        name: 'Acme Coffee',
        slug: 'acme_Coffee-1',
        brand_kit: { colors: ['#112233'], logo: { url: 'https://acme.test/logo.png' } },
        settings: { default_utm: { source: 'qr' } },
        primary_domain_ulid: domain.ulid,
      });
      expect(res.status).to.equal(201);
      const brand = res.body.data;
      expect(brand.ulid).to.match(ULID_RE);
      expect(brand).to.deep.equal({
        ulid: brand.ulid,
        name: 'Acme Coffee',
        slug: 'acme_Coffee-1',
        brand_kit: { colors: ['#112233'], logo: { url: 'https://acme.test/logo.png' } },
        settings: { default_utm: { source: 'qr' } },
        tracking_pixels: null,
        primary_domain: { ulid: domain.ulid, host: domain.host },
        created_at: '2026-04-01T12:00:00.000Z',
        updated_at: '2026-04-01T12:00:00.000Z',
      });
      expect((await svc.get(`/v1/brands/${brand.ulid}`, a.token)).body.data).to.deep.equal(brand);
    });

    it('derives the slug from the name and defaults brand_kit, settings and primary_domain', async () => {
      const org = await svc.createOrg();
      const brand = await create(org, { name: '  Café Crème & Co. ' });
      expect(brand).to.include({ name: '  Café Crème & Co. ', slug: 'cafe-creme-co' });
      expect(brand.brand_kit).to.deep.equal({});
      expect(brand.settings).to.deep.equal({});
      expect(brand.primary_domain).to.equal(null);
    });

    it('suffixes a derived slug that is taken, case-insensitively', async () => {
      const org = await svc.createOrg();
      await create(org, { name: 'x', slug: 'Summer-Sale' });
      const second = await create(org, { name: 'Summer Sale' });
      const third = await create(org, { name: 'SUMMER sale!' });
      expect([second.slug, third.slug]).to.deep.equal(['summer-sale-2', 'summer-sale-3']);
    });

    it('derives "brand" from a name without letters or digits', async () => {
      const org = await svc.createOrg();
      expect((await create(org, { name: '★★★' })).slug).to.equal('brand');
      expect(slugFromName('x'.repeat(80))).to.equal('x'.repeat(64));
    });

    it('refuses a given slug already taken in the organization (any case), but not in another one', async () => {
      await create(a, { name: 'Taken', slug: 'taken-slug' });
      const res = await svc.post('/v1/brands', a.token, { name: 'Again', slug: 'TAKEN-slug' });
      expect(res.status).to.equal(422);
      expect(res.body).to.deep.include({
        code: 'validation_failed',
        errors: { slug: ['The slug has already been taken.'] },
      });
      await create(b, { name: 'Elsewhere', slug: 'taken-slug' });
    });

    it('stores brand_kit nested 64 levels deep and refuses 65 with 422', async () => {
      const nest = (n: number) => {
        let v: unknown = 'leaf';
        for (let i = 0; i < n; i++) v = { k: v };
        return v as Record<string, unknown>;
      };
      const ok = await create(a, { name: 'Deep', brand_kit: nest(64) });
      expect(JSON.stringify(ok.brand_kit)).to.equal(JSON.stringify(nest(64)));
      const res = await svc.post('/v1/brands', a.token, { name: 'Deeper', brand_kit: nest(65) });
      expect(res.status).to.equal(422);
      expect(Object.values(res.body.errors)).to.deep.equal([['Must not be nested more than 64 levels deep.']]);
    });

    it('accepts a shared fallback host as primary domain', async () => {
      const brand = await create(a, { name: 'On fallback', primary_domain_ulid: fallback.ulid });
      expect(brand.primary_domain).to.deep.equal(fallback);
    });

    it('refuses another organization’s domain and an unknown domain as primary_domain_ulid', async () => {
      const foreign = await customDomain(b);
      for (const ulid of [foreign.ulid, '01HZZZZZZZZZZZZZZZZZZZZZZZ']) {
        const before = await brandCount();
        const res = await svc.post('/v1/brands', a.token, { name: 'Nope', primary_domain_ulid: ulid });
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.deep.equal({ primary_domain_ulid: ['No such domain in this organization.'] });
        expect(await brandCount()).to.equal(before);
      }
    });

    const invalid: [string, unknown, string][] = [
      ['a missing name', {}, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name of 256 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a numeric name', { name: 12 }, 'name'],
      ['a slug with a space', { name: 'x', slug: 'a b' }, 'slug'],
      ['a slug with a dot', { name: 'x', slug: 'a.b' }, 'slug'],
      ['a slug with a slash', { name: 'x', slug: 'a/b' }, 'slug'],
      ['an empty slug', { name: 'x', slug: '' }, 'slug'],
      ['a slug of 65 characters', { name: 'x', slug: 's'.repeat(65) }, 'slug'],
      ['a non-object brand_kit', { name: 'x', brand_kit: 'red' }, 'brand_kit'],
      ['an array brand_kit', { name: 'x', brand_kit: [] }, 'brand_kit'],
      ['a null settings', { name: 'x', settings: null }, 'settings'],
      ['a malformed primary_domain_ulid', { name: 'x', primary_domain_ulid: 'abc' }, 'primary_domain_ulid'],
      ['an unknown field', { name: 'x', org_id: 1 }, 'org_id'],
      ['a NUL character in the name', { name: 'a\u0000b' }, 'name'],
      [
        'a NUL character inside brand_kit',
        { name: 'x', brand_kit: { colors: ['#fff', 'a\u0000'] } },
        'brand_kit.colors.1',
      ],
      ['an unpaired surrogate inside settings', { name: 'x', settings: { note: '\ud800' } }, 'settings.note'],
      ['an unpaired surrogate in the name', { name: 'x\udc00' }, 'name'],
    ];
    for (const [what, body, field] of invalid) {
      it(`refuses ${what} with 422 on ${field} and creates nothing`, async () => {
        const before = await brandCount();
        const res = await svc.post('/v1/brands', a.token, body);
        expect(res.status).to.equal(422);
        expect(res.body.code).to.equal('validation_failed');
        expect(Object.keys(res.body.errors)).to.deep.equal([field]);
        expect(await brandCount()).to.equal(before);
      });
    }
  });

  describe('GET /v1/brands', () => {
    it('lists every brand of the organization in creation order and none of another', async () => {
      const org = await svc.createOrg();
      const other = await svc.createOrg();
      const b1 = await create(org, { name: 'One' });
      const b2 = await create(org, { name: 'Two' });
      await create(other, { name: 'Theirs' });
      const res = await svc.get('/v1/brands', org.token);
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ data: [b1, b2], meta: { next_cursor: null } });
    });

    it('pages with limit and cursor', async () => {
      const org = await svc.createOrg();
      const made = [];
      for (let i = 0; i < 5; i++) made.push(await create(org, { name: `B${i}` }));
      const p1 = await svc.get('/v1/brands?limit=2', org.token);
      const p2 = await svc.get(`/v1/brands?limit=2&cursor=${p1.body.meta.next_cursor}`, org.token);
      const p3 = await svc.get(`/v1/brands?limit=2&cursor=${p2.body.meta.next_cursor}`, org.token);
      expect([p1, p2, p3].map((p) => p.body.data.map((x: { slug: string }) => x.slug))).to.deep.equal([
        ['b0', 'b1'],
        ['b2', 'b3'],
        ['b4'],
      ]);
      expect(p3.body.meta.next_cursor).to.equal(null);
    });

    it('streams more brands than one batch without a limit, complete and in order', async () => {
      const org = await svc.createOrg();
      const rows = Array.from({ length: 1203 }, (_, i) => ({
        ulid: ulid(),
        org_id: org.org.id,
        name: `Bulk ${i}`,
        slug: `bulk-${i}`,
        brand_kit: '{}',
        settings: '{}',
      }));
      await svc.app.db.batchInsert('brands', rows, 500);
      const res = await svc.get('/v1/brands', org.token);
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      // Streamed: sent in chunks, so the length is not known up front.
      expect(res.headers.get('content-length')).to.equal(null);
      expect(res.body.data).to.have.length(1203);
      expect(res.body.data.map((x: { slug: string }) => x.slug)).to.deep.equal(rows.map((r) => r.slug));
      expect(res.body.meta).to.deep.equal({ next_cursor: null });
    });
  });

  describe('PATCH /v1/brands/{brand_ulid}', () => {
    it('changes only the keys given', async () => {
      svc.clock.set('2026-04-02T08:00:00.000Z');
      const domain = await customDomain(a);
      const brand = await create(a, {
        name: 'Before',
        brand_kit: { k: 1 },
        settings: { s: 1 },
        primary_domain_ulid: domain.ulid,
      });
      svc.clock.set('2026-04-02T09:00:00.000Z');
      const res = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { name: 'After' });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ ...brand, name: 'After', updated_at: '2026-04-02T09:00:00.000Z' });
      const res2 = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { brand_kit: { k: 2 }, slug: 'after' });
      expect(res2.body.data).to.deep.include({ name: 'After', slug: 'after', brand_kit: { k: 2 }, settings: { s: 1 } });
      expect(res2.body.data.primary_domain).to.deep.equal({ ulid: domain.ulid, host: domain.host });
    });

    it('clears the primary domain with null and sets a fallback one', async () => {
      const domain = await customDomain(a);
      const brand = await create(a, { name: 'P', primary_domain_ulid: domain.ulid });
      const cleared = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { primary_domain_ulid: null });
      expect(cleared.body.data.primary_domain).to.equal(null);
      const set = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { primary_domain_ulid: fallback.ulid });
      expect(set.body.data.primary_domain).to.deep.equal(fallback);
    });

    it('answers an empty body with the brand unchanged', async () => {
      const brand = await create(a, { name: 'Same' });
      const res = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, {});
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal(brand);
    });

    it('refuses a slug taken by another brand but accepts a change of case of its own', async () => {
      await create(a, { name: 'x', slug: 'occupied' });
      const brand = await create(a, { name: 'x', slug: 'mine' });
      const res = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { slug: 'Occupied' });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.deep.equal({ slug: ['The slug has already been taken.'] });
      const own = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, { slug: 'MINE' });
      expect(own.status).to.equal(200);
      expect(own.body.data.slug).to.equal('MINE');
    });

    it('refuses invalid values with 422 and changes nothing', async () => {
      const foreign = await customDomain(b);
      const brand = await create(a, { name: 'Stable' });
      const cases: [unknown, string][] = [
        [{ name: null }, 'name'],
        [{ name: '' }, 'name'],
        [{ slug: 'a b' }, 'slug'],
        [{ slug: null }, 'slug'],
        [{ brand_kit: 1 }, 'brand_kit'],
        [{ settings: [] }, 'settings'],
        [{ primary_domain_ulid: foreign.ulid }, 'primary_domain_ulid'],
        [{ primary_domain_ulid: 'x' }, 'primary_domain_ulid'],
        [{ ulid: brand.ulid }, 'ulid'],
      ];
      for (const [body, field] of cases) {
        const res = await svc.patch(`/v1/brands/${brand.ulid}`, a.token, body);
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect(Object.keys(res.body.errors), JSON.stringify(body)).to.deep.equal([field]);
      }
      expect((await svc.get(`/v1/brands/${brand.ulid}`, a.token)).body.data).to.deep.equal(brand);
    });
  });

  describe('GET /v1/brands/{brand_ulid}', () => {
    it('answers 422 for a malformed ULID and 404 for an unknown one', async () => {
      const bad = await svc.get('/v1/brands/xyz', a.token);
      expect(bad.status).to.equal(422);
      expect(bad.body.errors).to.have.property('brand_ulid');
      const missing = await svc.get('/v1/brands/01HZZZZZZZZZZZZZZZZZZZZZZZ', a.token);
      expect(missing.status).to.equal(404);
      expect(missing.body.code).to.equal('not_found');
    });

    it('finds a brand by its ULID in lowercase', async () => {
      const brand = await create(a, { name: 'Lower' });
      const res = await svc.get(`/v1/brands/${brand.ulid.toLowerCase()}`, a.token);
      expect(res.status).to.equal(200);
      expect(res.body.data.ulid).to.equal(brand.ulid);
    });
  });

  describe('isolation between organizations', () => {
    it('answers 404 to GET and PATCH of another organization’s brand and changes nothing', async () => {
      const brand = await create(a, { name: 'Private' });
      expect((await svc.get(`/v1/brands/${brand.ulid}`, b.token)).status).to.equal(404);
      const patched = await svc.patch(`/v1/brands/${brand.ulid}`, b.token, { name: 'Hijacked' });
      expect(patched.status).to.equal(404);
      expect((await svc.get(`/v1/brands/${brand.ulid}`, a.token)).body.data).to.deep.equal(brand);
      const list = (await svc.get('/v1/brands', b.token)).body.data as { ulid: string }[];
      expect(list.map((x) => x.ulid)).to.not.include(brand.ulid);
    });
  });

  describe('abilities', () => {
    it('requires brands.view to read and brands.manage to write', async () => {
      const brand = await create(a, { name: 'Guarded' });
      const viewer = await svc.createToken(a.org, { role: 'viewer' });
      const codesOnly = await svc.createToken(a.org, { abilities: ['codes.view', 'brands.manage'] });
      const checks: [string, string, string, unknown, string][] = [
        ['GET', '/v1/brands', codesOnly, undefined, 'brands.view'],
        ['GET', `/v1/brands/${brand.ulid}`, codesOnly, undefined, 'brands.view'],
        ['POST', '/v1/brands', viewer, { name: 'no' }, 'brands.manage'],
        ['PATCH', `/v1/brands/${brand.ulid}`, viewer, { name: 'no' }, 'brands.manage'],
      ];
      for (const [method, path, token, body, ability] of checks) {
        const res = await svc.request(method, path, { token, body });
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body).to.include({ code: 'forbidden', required_ability: ability });
      }
      expect((await svc.get('/v1/brands', viewer)).status).to.equal(200);
      expect((await svc.get(`/v1/brands/${brand.ulid}`, a.token)).body.data.name).to.equal('Guarded');
    });
  });
});
