import { expect } from 'chai';
import { ulid } from 'ulid';
import { startTestService, type ApiResponse, type TestOrg, type TestService } from '../helpers/harness.js';

// GET /v1/qr-codes narrowed by type, brand and domain (with search and status) and ordered by
// name either way, paged through keyset cursors: every page continues where the last one ended.
describe('GET /v1/qr-codes: type, brand and domain filters and name orders', () => {
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  const ids: Record<string, string> = {};
  let coffee: string;
  let books: string;
  let shared: string;
  let custom: string;
  let foreignBrand: string;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'acme' });
    b = await svc.createOrg({ plan: 'enterprise_monthly', slug: 'globex' });
    shared = (await svc.get('/v1/domains', a.token)).body.data[0].ulid;
    custom = ulid();
    await svc.app.db('domains').insert({
      ulid: custom,
      org_id: a.org.id,
      host: 'go.acme.test',
      type: 'custom',
      status: 'active',
    });
    coffee = (await svc.post('/v1/brands', a.token, { name: 'Coffee', slug: 'coffee' })).body.data.ulid;
    books = (await svc.post('/v1/brands', a.token, { name: 'Books', slug: 'books' })).body.data.ulid;
    foreignBrand = (await svc.post('/v1/brands', b.token, { name: 'Other', slug: 'other' })).body.data.ulid;
    // Created in this order; names mixed in case, one without a name (sorted by its slug acme/delta).
    const specs = [
      { slug: 'echo', name: 'echo menu', brand_ulid: coffee },
      { slug: 'alpha', name: 'Alpha poster', brand_ulid: books, domain_ulid: custom },
      { slug: 'delta', name: null, type: 'vcard', destination: { name: 'Ada' } },
      { slug: 'charlie', name: 'Charlie', brand_ulid: coffee, domain_ulid: custom },
      { slug: 'bravo', name: 'bravo card', type: 'vcard', destination: { name: 'Bo' }, brand_ulid: coffee },
      { slug: 'foxtrot', name: 'Alpha poster', brand_ulid: books },
    ];
    for (const s of specs) {
      const res = await svc.post('/v1/qr-codes', a.token, {
        destination: `https://acme.example/${s.slug}`,
        domain_ulid: shared,
        ...s,
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      ids[s.slug] = res.body.data.ulid;
    }
    await svc.post('/v1/qr-codes', b.token, {
      slug: 'alpha',
      name: 'Aardvark',
      destination: 'https://globex.example/',
      domain_ulid: shared,
      brand_ulid: foreignBrand,
    });
    await svc.patch(`/v1/qr-codes/${ids.charlie}`, a.token, { status: 'paused' });
  });
  after(() => svc?.close());

  const slugs = async (q: string, token = a.token) => {
    const res = await svc.get(`/v1/qr-codes?${q}`, token);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.map((c: { slug: string }) => c.slug.split('/')[1]);
  };

  /** Every page of a query, `limit` at a time, through the cursors. */
  async function pages(q: string, limit: number): Promise<string[][]> {
    const out: string[][] = [];
    let cursor: string | null = null;
    do {
      const res: ApiResponse = await svc.get(
        `/v1/qr-codes?${q}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
        a.token,
      );
      expect(res.status).to.equal(200);
      out.push(res.body.data.map((c: { slug: string }) => c.slug.split('/')[1]));
      cursor = res.body.meta.next_cursor;
    } while (cursor);
    return out;
  }

  it('narrows to a type, a brand, a domain, and all of them with search and status', async () => {
    expect(await slugs('type=vcard')).to.deep.equal(['delta', 'bravo']);
    expect(await slugs('type=url')).to.deep.equal(['echo', 'alpha', 'charlie', 'foxtrot']);
    expect(await slugs('type=wifi')).to.deep.equal([]);
    expect(await slugs(`brand_ulid=${coffee}`)).to.deep.equal(['echo', 'charlie', 'bravo']);
    expect(await slugs(`domain_ulid=${custom}`)).to.deep.equal(['alpha', 'charlie']);
    expect(await slugs(`domain_ulid=${shared}`)).to.deep.equal(['echo', 'delta', 'bravo', 'foxtrot']);
    expect(await slugs(`brand_ulid=${coffee}&domain_ulid=${custom}`)).to.deep.equal(['charlie']);
    expect(await slugs(`brand_ulid=${coffee}&status=active&type=url`)).to.deep.equal(['echo']);
    expect(await slugs(`brand_ulid=${books}&search=poster&order=newest`)).to.deep.equal(['foxtrot', 'alpha']);
  });

  it('orders by name A to Z and Z to A, any case, a code without a name by its slug, ties by creation', async () => {
    // "Alpha poster" twice: alpha was created first (Z to A: last).
    const az = ['alpha', 'foxtrot', 'bravo', 'charlie', 'delta', 'echo'];
    expect(await slugs('order=name')).to.deep.equal(az);
    expect(await slugs('order=name_desc')).to.deep.equal([...az].reverse());
  });

  for (const order of ['name', 'name_desc', 'oldest', 'newest']) {
    it(`pages through order=${order} with cursors to the same codes as one page, none twice`, async () => {
      const whole = await slugs(`order=${order}&limit=100`);
      for (const limit of [1, 2, 4]) expect((await pages(`order=${order}`, limit)).flat()).to.deep.equal(whole);
      const filtered = await slugs(`order=${order}&brand_ulid=${coffee}&limit=100`);
      expect((await pages(`order=${order}&brand_ulid=${coffee}`, 2)).flat()).to.deep.equal(filtered);
    });
  }

  it('answers 404 for a brand or domain of another organization or none, and 422 for a bad value', async () => {
    expect((await svc.get(`/v1/qr-codes?brand_ulid=${foreignBrand}`, a.token)).status).to.equal(404);
    expect((await svc.get(`/v1/qr-codes?brand_ulid=${ulid()}`, a.token)).status).to.equal(404);
    expect((await svc.get(`/v1/qr-codes?domain_ulid=${custom}`, b.token)).status).to.equal(404);
    for (const q of ['type=poster', 'brand_ulid=nope', 'domain_ulid=1', 'order=size']) {
      const res = await svc.get(`/v1/qr-codes?${q}`, a.token);
      expect(res.status, q).to.equal(422);
      expect(res.body.code).to.equal('validation_failed');
    }
  });

  it('never lists another organization’s codes, whatever the filter', async () => {
    expect(await slugs('order=name', b.token)).to.deep.equal(['alpha']);
    expect(await slugs(`brand_ulid=${foreignBrand}`, b.token)).to.deep.equal(['alpha']);
    expect(await slugs('search=alpha')).to.deep.equal(['alpha', 'foxtrot']);
  });
});
