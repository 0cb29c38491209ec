import { expect } from 'chai';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { runJobs } from '../helpers/jobs.js';
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
        product({
          links: [
            { link_type: 'gs1:pip', href: 'https://x.example/', title: 'A', default: true },
            { link_type: 'gs1:pip', href: 'https://x.example/zh', title: 'B', hreflang: ['zh-Hant'] },
          ],
        }),
        'destination.links.1.hreflang.0',
        /GS1 linkset schema/,
      ],
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

  it('bulk import from CSV: one line per link makes a product and its lot, staged then created', async () => {
    const file = [
      'Slug,GTIN,Lot,Description,Link type,Href,Title,Hreflang,Default',
      'csv-soap,4000417025005,,Lavender soap,gs1:pip,https://brand.example/soap,Product page,,yes',
      'csv-soap,4000417025005,,,gs1:pip,https://brand.example/de/seife,Produktseite,de,yes',
      'csv-soap,4000417025005,,,gs1:instructions,https://brand.example/soap/use,"How to use, safely",en,',
      ',4000417025005,L42,,gs1:recallStatus,https://brand.example/soap/recall,Recall of lot L42,,',
    ].join('\r\n');
    const res = await svc.post('/v1/qr-codes/bulk', a.token, { csv: file, defaults: { domain_ulid: fallback } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.data.total_rows).to.equal(2);
    expect(res.body.data.valid_row_count).to.equal(2);
    const done = await svc.post(`/v1/qr-codes/bulk/${res.body.data.ulid}/confirm`, a.token, {
      confirm_token: res.body.meta.confirm_token,
    });
    expect(done.status, done.text).to.equal(202);
    await runJobs(svc.app);
    const soap = await svc.app.db('qr_codes').where({ org_id: a.org.id }).whereRaw("slug like '%/csv-soap'").first();
    expect(soap.type).to.equal('gs1');
    expect(soap.destination.gtin).to.equal('04000417025005');
    expect(soap.destination.description).to.equal('Lavender soap');
    expect(soap.destination.links).to.deep.equal([
      { link_type: 'gs1:pip', href: 'https://brand.example/soap', title: 'Product page', default: true },
      {
        link_type: 'gs1:pip',
        href: 'https://brand.example/de/seife',
        title: 'Produktseite',
        hreflang: ['de'],
        default: true,
      },
      {
        link_type: 'gs1:instructions',
        href: 'https://brand.example/soap/use',
        title: 'How to use, safely',
        hreflang: ['en'],
      },
    ]);
    const lot = await svc.app
      .db('qr_codes')
      .where({ org_id: a.org.id })
      .whereRaw("slug like '%/04000417025005-L42'")
      .first();
    expect(lot.destination).to.deep.include({ gtin: '04000417025005', lot: 'L42' });
  });

  it('bulk import from CSV: every bad line is a 422 naming its line and column, and nothing is staged', async () => {
    const file = [
      'slug,gtin,link_type,href,title,default',
      'bad1,9506000134353,gs1:pip,https://x.example/1,Page,yes',
      'bad2,95060001343,gs1:pip,https://x.example/2,Page,yes',
      'bad3,6291041500213,gs1:nonsense,https://x.example/3,Page,yes',
      'bad4,96385074,gs1:pip,https://x.example/4,Page,yes',
      'bad4,96385074,gs1:faqs,https://x.example/5,FAQ,yes',
      'good,4006381333931,gs1:pip,https://x.example/6,Page,yes',
      'bad5,5901234123457,gs1:pip,https://x.example/7,Page,maybe',
    ].join('\n');
    const before = await svc.app.db('bulk_imports').where({ org_id: a.org.id }).count({ n: '*' }).first();
    const res = await svc.post('/v1/qr-codes/bulk', a.token, { csv: file, defaults: { domain_ulid: fallback } });
    expect(res.status, res.text).to.equal(422);
    expect(res.body.code).to.equal('validation_failed');
    expect(res.body.errors).to.deep.equal({
      'csv.2.gtin': ['Line 2: Wrong check digit: 9506000134353 should end in 2, not 3.'],
      'csv.3.gtin': ['Line 3: Must be a GTIN of 8, 12, 13 or 14 digits.'],
      'csv.4.link_type': [
        'Line 4: Unknown link type "gs1:nonsense": use a link type of the GS1 Web Vocabulary, e.g. gs1:pip, gs1:recipeInfo, gs1:instructions (docs/gs1.md lists them).',
      ],
      'csv.5.default': ['Line 5: 2 links are the default (default: true without hreflang): exactly one is allowed.'],
      'csv.6.default': ['Line 6: 2 links are the default (default: true without hreflang): exactly one is allowed.'],
      'csv.8.default': ['Line 8: default is yes or no (true/false, 1/0); got "maybe".'],
    });
    expect(res.body.message).to.equal('6 lines of the CSV file are invalid; nothing was staged.');
    const after = await svc.app.db('bulk_imports').where({ org_id: a.org.id }).count({ n: '*' }).first();
    expect(after).to.deep.equal(before);
    const unknown = await svc.post('/v1/qr-codes/bulk', a.token, { csv: 'slug,gtin,colour\nx,96385074,red' });
    expect(unknown.status).to.equal(422);
    expect(unknown.body.errors.csv[0]).to.match(/Unknown column "colour"/);
    const both = await svc.post('/v1/qr-codes/bulk', a.token, {
      csv: file,
      rows: [{ slug: 'x', destination: 'https://x.example/' }],
    });
    expect(both.status).to.equal(422);
  });

  it('GET /v1/qr-codes?type=gs1&gtin=: the codes of one product, any GTIN length, only the organization’s', async () => {
    const list = await svc.get('/v1/qr-codes?limit=100&type=gs1&gtin=9506000134352', a.token);
    expect(list.status, list.text).to.equal(200);
    const mine = (await svc.get('/v1/qr-codes?limit=100&type=gs1', a.token)).body.data;
    expect(mine.every((c: { type: string }) => c.type === 'gs1')).to.equal(true);
    // Exactly the organization's codes of that product (GTIN-14), while it has codes of others too.
    type Gs1Code = { ulid: string; destination: { gtin: string } };
    const ofProduct = mine.filter((c: Gs1Code) => c.destination.gtin === GTIN).map((c: Gs1Code) => c.ulid);
    expect(ofProduct).to.not.be.empty;
    expect(mine.length).to.be.above(ofProduct.length);
    expect(list.body.data.map((c: Gs1Code) => c.ulid).sort()).to.deep.equal(ofProduct.sort());
    const theirs = await svc.get('/v1/qr-codes?limit=100&gtin=9506000134352', b.token);
    expect(theirs.body.data.map((c: { ulid: string }) => c.ulid)).to.not.include.members(
      list.body.data.map((c: { ulid: string }) => c.ulid),
    );
    expect((await svc.get('/v1/qr-codes?gtin=123', a.token)).status).to.equal(422);
  });

  it('GET /v1/gs1/link-types: the vocabulary a link may use, without the derived link types', async () => {
    const res = await svc.get('/v1/gs1/link-types', a.token);
    expect(res.status, res.text).to.equal(200);
    const types = res.body.data.map((t: { link_type: string }) => t.link_type);
    expect(types).to.include.members(['gs1:pip', 'gs1:recipeInfo', 'gs1:recallStatus', 'gs1:instructions']);
    expect(types).to.not.include.members(['gs1:defaultLink', 'gs1:defaultLinkMulti', 'gs1:handledBy']);
    expect(res.body.data.find((t: { link_type: string }) => t.link_type === 'gs1:pip').title).to.be.a('string').and.not
      .empty;
    expect((await svc.get('/v1/gs1/link-types', '')).status).to.equal(401);
  });

  it('another organization cannot read or change a gs1 code (404)', async () => {
    const mine = await create(a, product({ gtin: '4006381333931' }));
    expect((await svc.get(`/v1/qr-codes/${mine.body.data.ulid}`, b.token)).status).to.equal(404);
    const res = await svc.patch(`/v1/qr-codes/${mine.body.data.ulid}`, b.token, { name: 'x' });
    expect(res.status).to.equal(404);
  });
});
