import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { toolError, toolOk } from './mcp-helpers.js';

const GTIN = '09506000134352';
const product = (extra: Record<string, unknown> = {}) => ({
  gtin: '9506000134352',
  description: 'Dal Giardino risotto rice with mushrooms',
  links: [
    { link_type: 'gs1:pip', href: 'https://brand.example/rice', title: 'Product page', default: true },
    { link_type: 'gs1:recipeInfo', href: 'https://brand.example/rice/recipes', title: 'Recipes', hreflang: ['en'] },
  ],
  ...extra,
});

describe('gs1 codes: GTIN products, lots and serials as codes', function () {
  this.timeout(60_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let n = 0;

  const create = (org: TestOrg, destination: unknown, extra: Record<string, unknown> = {}) =>
    svc.post('/v1/qr-codes', org.token, { slug: `g${++n}`, domain_ulid: fallback, type: 'gs1', destination, ...extra });

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
  });
  after(() => svc?.close());

  it('creates a product: GTIN stored as GTIN-14, public_url the Digital Link URI under the organization on the fallback host', async () => {
    const res = await create(a, product({ data: { '17': '261231' } }));
    expect(res.status, res.text).to.equal(201);
    const code = res.body.data;
    expect(code.type).to.equal('gs1');
    expect(code.trackable).to.equal(true);
    expect(code.destination.gtin).to.equal(GTIN);
    expect(code.public_url).to.equal(`http://localhost:3001/${a.org.slug}/01/${GTIN}?17=261231`);
  });

  it('a lot and a serial are codes of their own, their URI with the qualifiers in order', async () => {
    const lot = await create(a, { gtin: GTIN, lot: 'LOT7/A', serial: 'S1', links: [] });
    expect(lot.status, lot.text).to.equal(201);
    expect(lot.body.data.public_url).to.equal(`http://localhost:3001/${a.org.slug}/01/${GTIN}/10/LOT7%2FA/21/S1`);
  });

  it('answers 422 saying exactly what is wrong', async () => {
    const cases: [unknown, string, RegExp][] = [
      [product({ gtin: '9506000134353' }), 'destination.gtin', /should end in 2/],
      [product({ gtin: '95060001343' }), 'destination.gtin', /8, 12, 13 or 14 digits/],
      [product({ lot: 'a~b' }), 'destination.lot', /character set 82/],
      [
        product({ links: [{ link_type: 'gs1:nonsense', href: 'https://x.example/', title: 'X', default: true }] }),
        'destination.links.0.link_type',
        /Unknown link type/,
      ],
      [
        product({
          links: [
            { link_type: 'gs1:pip', href: 'https://x.example/1', title: 'A', default: true },
            { link_type: 'gs1:faqs', href: 'https://x.example/2', title: 'B', default: true },
          ],
        }),
        'destination.links',
        /2 links are the default/,
      ],
      [
        product({ links: [{ link_type: 'gs1:pip', href: 'https://x.example/', title: 'A' }] }),
        'destination.links',
        /exactly one default link/,
      ],
      [
        product({ links: [{ link_type: 'gs1:defaultLink', href: 'https://x.example/', title: 'A', default: true }] }),
        'destination.links.0.link_type',
        /derived by the resolver/,
      ],
      [product({ data: { '17': '261341' } }), 'destination.data.17', /YYMMDD/],
      [
        product({ links: [{ link_type: 'gs1:pip', href: 'ftp://x.example/', title: 'A', default: true }] }),
        'destination.links.0.href',
        /./,
      ],
    ];
    for (const [destination, field, message] of cases) {
      const res = await create(a, destination);
      expect(res.status, res.text).to.equal(422);
      expect(res.body.errors, res.text).to.have.property(field);
      expect(res.body.errors[field].join(' '), res.text).to.match(message);
    }
  });

  it('one code per GTIN, lot and serial on a domain: a second is 422, another organization may hold the same GTIN', async () => {
    const again = await create(a, product());
    expect(again.status, again.text).to.equal(422);
    expect(again.body.errors.destination.join(' ')).to.include('already exists');
    const other = await create(b, product());
    expect(other.status, other.text).to.equal(201);
    expect(other.body.data.public_url).to.equal(`http://localhost:3001/${b.org.slug}/01/${GTIN}`);
  });

  it('a code cannot change to or from gs1', async () => {
    const url = await svc.post('/v1/qr-codes', a.token, {
      slug: `g${++n}`,
      domain_ulid: fallback,
      destination: 'https://x.example/',
    });
    const res = await svc.patch(`/v1/qr-codes/${url.body.data.ulid}`, a.token, {
      type: 'gs1',
      destination: product({ gtin: '96385074' }),
    });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.errors.type.join(' ')).to.include('gs1');
  });

  it('MCP: codes_create makes a gs1 code and answers its errors like REST', async () => {
    const made = await toolOk(svc, a.token, 'codes_create', {
      slug: `g${++n}`,
      domain_ulid: fallback,
      type: 'gs1',
      destination: product({ gtin: '036000291452' }),
    });
    expect(made.data.public_url).to.equal(`http://localhost:3001/${a.org.slug}/01/00036000291452`);
    const bad = await toolError(svc, a.token, 'codes_create', {
      slug: `g${++n}`,
      domain_ulid: fallback,
      type: 'gs1',
      destination: product({ gtin: '036000291453' }),
    });
    expect(bad.code).to.equal('validation_failed');
    expect(bad.errors['destination.gtin'].join(' ')).to.include('should end in 2');
  });

  it('bulk import: gs1 rows are staged like any code, a wrong check digit reported on its row', async () => {
    const res = await svc.post('/v1/qr-codes/bulk', a.token, {
      defaults: { domain_ulid: fallback },
      rows: [
        { slug: `g${++n}`, type: 'gs1', destination: product({ gtin: '6291041500213' }) },
        { slug: `g${++n}`, type: 'gs1', destination: product({ gtin: '6291041500214' }) },
      ],
    });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.valid_row_count).to.equal(1);
    expect(res.body.data.preview_errors).to.deep.include({
      row: 1,
      field: 'destination.gtin',
      message: 'Wrong check digit: 6291041500214 should end in 3, not 4.',
    });
  });

  it('another organization cannot read or change a gs1 code (404)', async () => {
    const mine = await create(a, product({ gtin: '4006381333931' }));
    expect((await svc.get(`/v1/qr-codes/${mine.body.data.ulid}`, b.token)).status).to.equal(404);
    const res = await svc.patch(`/v1/qr-codes/${mine.body.data.ulid}`, b.token, { name: 'x' });
    expect(res.status).to.equal(404);
  });
});
