// The GS1-Conformant resolver, statement by statement of the standard's conformance list (GS1-
// Conformant Resolver 1.2.0, section "Conformance statement"), on the real stores, over the
// redirect listener: on a fallback host (/<org-slug>/01/…) and on a custom domain (/01/…).
// Linksets and the description file are validated by jsonschema (not the ajv this service uses)
// against the schemas the project ships.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'chai';
import { Validator } from 'jsonschema';
import digitalLink from 'digital-link.js';
import { ulid } from 'ulid';
import { clickHouseTime, GS1_RESOLUTION_COLUMNS, SCAN_EVENT_COLUMNS } from '../../server/analytics/scan-event.js';
import { replayLeftovers } from '../../server/redirect/leftovers.js';
import { startRedirectListener, type RedirectListener } from '../../server/redirect/listener.js';
import { tsvLine } from '../../server/redirect/scan-buffer.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { runJobs } from '../helpers/jobs.js';
import { scanRow } from '../helpers/fixtures.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { unzip } from '../helpers/zip.js';
import { toolOk } from './mcp-helpers.js';
import { chRows, DESKTOP, FALLBACK, hit, insertCustomDomain } from './redirect-fixtures.js';

const GTIN = '09506000134352';
const schema = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../server/qr-codes/${name}`, import.meta.url), 'utf8')) as Record<
    string,
    unknown
  >;
const validator = new Validator();

function expectValid(doc: unknown, name: string): void {
  const result = validator.validate(doc, schema(name));
  expect(
    result.errors.map((e) => e.stack),
    JSON.stringify(doc),
  ).to.deep.equal([]);
}

describe('GS1-Conformant resolver: the conformance statements', function () {
  this.timeout(90_000);
  let svc: TestService;
  let rd: RedirectListener;
  let a: TestOrg;
  let b: TestOrg;
  let fallback: string;
  let customHost: string;
  let productCode: string;
  let lotCode: string;
  let prefix: string;

  const get = (path: string, headers: Record<string, string> = {}, host = FALLBACK, method = 'GET') =>
    hit(rd.port, host, path, { method, headers: { 'User-Agent': DESKTOP, ...headers } });
  /** A product of organization a on the fallback host (a gs1 code of a GTIN) with one default link; its ulid. */
  const createProduct = async (slug: string, gtin: string, href: string): Promise<string> => {
    const made = await svc.post('/v1/qr-codes', a.token, {
      slug,
      type: 'gs1',
      domain_ulid: fallback,
      destination: { gtin, links: [{ link_type: 'gs1:pip', href, title: 'P', default: true }] },
    });
    expect(made.status, made.text).to.equal(201);
    return made.body.data.ulid;
  };

  before(async () => {
    svc = await startTestService({ config: { trustProxy: ['127.0.0.1'] } });
    rd = await startRedirectListener(svc.app, 0, '127.0.0.1', { flushMs: 50 });
    a = await svc.createOrg();
    b = await svc.createOrg();
    prefix = `/${a.org.slug}`;
    fallback = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    const created = await svc.post('/v1/qr-codes', a.token, {
      slug: 'rice',
      type: 'gs1',
      domain_ulid: fallback,
      destination: {
        gtin: GTIN,
        description: 'Dal Giardino risotto rice',
        links: [
          { link_type: 'gs1:pip', href: 'https://brand.example/rice', title: 'Product page', default: true },
          {
            link_type: 'gs1:pip',
            href: 'https://brand.example/de/reis',
            title: 'Produktseite',
            hreflang: ['de'],
            default: true,
          },
          { link_type: 'gs1:recipeInfo', href: 'https://brand.example/recipes/en', title: 'Recipes', hreflang: ['en'] },
          {
            link_type: 'gs1:recipeInfo',
            href: 'https://brand.example/recipes/fr',
            title: 'Recettes',
            hreflang: ['fr'],
          },
          { link_type: 'gs1:recipeInfo', href: 'https://brand.example/recipes/it', title: 'Ricette', hreflang: ['it'] },
          {
            link_type: 'gs1:recipeInfo',
            href: 'https://brand.example/recipes/it2',
            title: 'Ricette 2',
            hreflang: ['it'],
          },
          {
            link_type: 'https://gs1.org/voc/certificationInfo',
            href: 'https://brand.example/cert.pdf',
            title: 'Certificate',
            type: 'application/pdf',
          },
          { link_type: 'gs1:recallStatus', href: 'https://brand.example/recall?gtin=1', title: 'Recall status' },
        ],
      },
    });
    expect(created.status, created.text).to.equal(201);
    productCode = created.body.data.ulid;
    const lot = await svc.post('/v1/qr-codes', a.token, {
      slug: 'rice-lot-abc',
      type: 'gs1',
      domain_ulid: fallback,
      destination: {
        gtin: GTIN,
        lot: 'ABC1',
        links: [
          { link_type: 'gs1:recallStatus', href: 'https://brand.example/recall/abc1', title: 'Lot ABC1 recalled' },
        ],
      },
    });
    expect(lot.status, lot.text).to.equal(201);
    lotCode = lot.body.data.ulid;
    customHost = `id.${a.org.slug}.example`;
    const domainId = await insertCustomDomain(svc.app, a.org.id, customHost);
    const domainUlid = (await svc.app.db('domains').where({ id: domainId }).first('ulid')).ulid;
    const onCustom = await svc.post('/v1/qr-codes', a.token, {
      slug: 'rice-custom',
      type: 'gs1',
      domain_ulid: domainUlid,
      destination: {
        gtin: GTIN,
        links: [{ link_type: 'gs1:pip', href: 'https://brand.example/custom', title: 'Product page', default: true }],
      },
    });
    expect(onCustom.status, onCustom.text).to.equal(201);
    expect(onCustom.body.data.public_url).to.equal(`https://${customHost}/01/${GTIN}`);
  });
  after(async () => {
    await rd?.close();
    await svc?.close();
  });

  const scans = async (ulid: string) => {
    await rd.scans.flush();
    const id = (await svc.app.db('qr_codes').where({ ulid }).first('id')).id;
    return chRows<{ n: string }>(
      svc.app,
      `SELECT count() AS n FROM ${svc.app.ch.database}.scan_events WHERE code_id = {id:UInt64}`,
      { id: Number(id) },
    ).then((r) => Number(r[0].n));
  };

  it('SHALL support HTTP GET, HEAD and OPTIONS requests', async () => {
    const g = await get(`${prefix}/01/${GTIN}`);
    expect(g.status).to.equal(307);
    const h = await get(`${prefix}/01/${GTIN}`, {}, FALLBACK, 'HEAD');
    expect(h.status).to.equal(307);
    expect(h.headers.location).to.equal(g.headers.location);
    const o = await get(
      `${prefix}/01/${GTIN}`,
      { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
      FALLBACK,
      'OPTIONS',
    );
    expect(o.status).to.equal(204);
    expect(o.headers.allow).to.equal('GET, HEAD, OPTIONS');
    expect(o.headers['access-control-allow-methods']).to.include('GET');
  });

  it('SHALL support CORS: Access-Control-Allow-Origin * and the Link and Location headers exposed', async () => {
    for (const path of [`${prefix}/01/${GTIN}`, `${prefix}/01/${GTIN}?linkType=linkset`, '/.well-known/gs1resolver']) {
      const res = await get(path, { Origin: 'https://app.example' });
      expect(res.headers['access-control-allow-origin'], path).to.equal('*');
      expect(res.headers['access-control-expose-headers'], path).to.include('Link');
    }
  });

  it('SHALL extract and syntactically validate the URI and report errors with 400 (never 200, never 404)', async () => {
    const bad = [
      `${prefix}/01/09506000134353`, // check digit
      `${prefix}/01/0950600013435`, // 13 digits without the right check digit
      `${prefix}/01/950600013435A`, // letters
      `${prefix}/01/${GTIN}/21/S1/10/L1`, // qualifiers out of order
      `${prefix}/01/${GTIN}/10/ABCDEFGHIJKLMNOPQRSTUVWXYZ`, // lot too long
      `${prefix}/01/${GTIN}/10`, // no value
      `${prefix}/01/${GTIN}/99/x`, // not a qualifier of a GTIN
      `${prefix}/01/${GTIN}?17=261399`, // not a date
      `/01/${GTIN}/10/a~b`, // character outside CSET 82 (custom domain)
    ];
    for (const path of bad) {
      const host = path.startsWith('/01/') ? customHost : FALLBACK;
      const res = await get(path, {}, host);
      expect(res.status, `${path}: ${res.body}`).to.equal(400);
      expect(res.body).to.match(/^Not a valid GS1 Digital Link URI: .+/);
    }
  });

  it('SHALL NOT use 200 for an error: an unknown GTIN is 404, an unsupported primary key 404', async () => {
    const unknown = await get(`${prefix}/01/96385074`);
    expect(unknown.status).to.equal(404);
    const gln = await get(`${prefix}/414/9520123456788`);
    expect(gln.status).to.equal(404);
    expect(gln.body).to.include('GTINs (AI 01) only');
  });

  it('SHALL recognise one default link and redirect to it (307) unless the request matches better', async () => {
    const res = await get(`${prefix}/01/${GTIN}`);
    expect(res.status).to.equal(307);
    expect(res.headers.location).to.equal('https://brand.example/rice');
    // Accept-Language against hreflang: the German default.
    const de = await get(`${prefix}/01/${GTIN}`, { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' });
    expect(de.headers.location).to.equal('https://brand.example/de/reis');
    const ja = await get(`${prefix}/01/${GTIN}`, { 'Accept-Language': 'ja' });
    expect(ja.headers.location).to.equal('https://brand.example/rice');
  });

  it('SHALL redirect to the requested linkType if available, with the GS1 vocabulary as CURIE or URI', async () => {
    const pdf = await get(`${prefix}/01/${GTIN}?linkType=gs1:certificationInfo`);
    expect(pdf.status).to.equal(307);
    expect(pdf.headers.location).to.equal('https://brand.example/cert.pdf');
    const uri = await get(
      `${prefix}/01/${GTIN}?linkType=${encodeURIComponent('https://gs1.org/voc/certificationInfo')}`,
    );
    expect(uri.headers.location).to.equal('https://brand.example/cert.pdf');
    const fr = await get(`${prefix}/01/${GTIN}?linkType=gs1:recipeInfo`, { 'Accept-Language': 'fr' });
    expect(fr.headers.location).to.equal('https://brand.example/recipes/fr');
  });

  it('SHALL return 404 if a link of the requested type is not available (unknown or absent)', async () => {
    for (const t of ['gs1:epil', 'gs1:doesNotExist', 'nonsense']) {
      const res = await get(`${prefix}/01/${GTIN}?linkType=${t}`);
      expect(res.status, t).to.equal(404);
      expect(res.headers.link, t).to.include('rel="linkset"');
    }
  });

  it('answers 300 Multiple Choices with the candidates when the request cannot choose among links', async () => {
    const res = await get(`${prefix}/01/${GTIN}?linkType=gs1:recipeInfo`, { 'Accept-Language': 'it' });
    expect(res.status).to.equal(300);
    expect(res.headers['content-type']).to.equal('application/linkset+json');
    const doc = JSON.parse(res.body);
    expectValid(doc, 'gs1-linkset-schema.json');
    expect(doc.linkset[0]['https://ref.gs1.org/voc/recipeInfo'].map((l: { href: string }) => l.href)).to.deep.equal([
      'https://brand.example/recipes/it',
      'https://brand.example/recipes/it2',
    ]);
  });

  it('SHALL return the linkset (RFC 9264, GS1 form) for linkType=linkset and for Accept: application/linkset+json', async () => {
    for (const [path, headers] of [
      [`${prefix}/01/${GTIN}?linkType=linkset`, {}],
      [`${prefix}/01/${GTIN}?linkType=all`, {}],
      [`${prefix}/01/${GTIN}`, { Accept: 'application/linkset+json' }],
    ] as const) {
      const res = await get(path, headers);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type']).to.equal('application/linkset+json');
      expect(res.headers.link).to.include('rel="http://www.w3.org/ns/json-ld#context"');
      const doc = JSON.parse(res.body);
      expectValid(doc, 'gs1-linkset-schema.json');
      const ctx = doc.linkset[0];
      expect(ctx.anchor).to.equal(`http://localhost:3001${prefix}/01/${GTIN}`);
      expect(ctx.description).to.equal('Dal Giardino risotto rice');
      expect(ctx['https://ref.gs1.org/voc/defaultLink']).to.deep.equal([
        { href: 'https://brand.example/rice', title: 'Product page' },
      ]);
    }
  });

  it('SHALL include, for a URI with key qualifiers, the links of each level up to the primary key (a lot overrides by link type)', async () => {
    const res = await get(`${prefix}/01/${GTIN}/10/ABC1?linkType=linkset`);
    const ctx = JSON.parse(res.body).linkset[0];
    expectValid(JSON.parse(res.body), 'gs1-linkset-schema.json');
    expect(ctx.anchor).to.equal(`http://localhost:3001${prefix}/01/${GTIN}/10/ABC1`);
    expect(ctx['https://ref.gs1.org/voc/recallStatus']).to.deep.equal([
      { href: 'https://brand.example/recall/abc1', title: 'Lot ABC1 recalled' },
    ]);
    expect(ctx['https://ref.gs1.org/voc/pip']).to.have.length(2); // inherited from the GTIN
    // A lot without a code of its own resolves with the GTIN's links.
    const other = await get(`${prefix}/01/${GTIN}/10/ZZZ?linkType=gs1:recallStatus`);
    expect(other.headers.location).to.equal('https://brand.example/recall?gtin=1');
    const lot = await get(`${prefix}/01/${GTIN}/10/ABC1?linkType=gs1:recallStatus`);
    expect(lot.headers.location).to.equal('https://brand.example/recall/abc1');
  });

  it('the shipped linkset schema is GS1’s: it refuses what the standard refuses', () => {
    const good = {
      linkset: [
        {
          anchor: 'https://id.example/01/09506000134352',
          'https://ref.gs1.org/voc/pip': [{ href: 'https://x.example/', title: 'A' }],
        },
      ],
    };
    expectValid(good, 'gs1-linkset-schema.json');
    const refused = (doc: unknown) => validator.validate(doc, schema('gs1-linkset-schema.json')).errors.length;
    expect(
      refused({ linkset: [{ 'https://ref.gs1.org/voc/pip': [{ href: 'https://x.example/', title: 'A' }] }] }),
    ).to.be.above(0); // no anchor
    expect(
      refused({
        linkset: [{ anchor: 'https://id.example/', 'https://ref.gs1.org/voc/pip': [{ href: 'https://x.example/' }] }],
      }),
    ).to.be.above(0); // no title
    expect(
      refused({
        linkset: [
          {
            anchor: 'https://id.example/',
            'https://ref.gs1.org/voc/pip': [{ href: 'https://x.example/', title: 'A', hreflang: ['zh-Hant'] }],
          },
        ],
      }),
    ).to.be.above(0);
    expect(refused({ linkset: [{ anchor: 'https://id.example/', Extra: 'x' }] })).to.be.above(0);
  });

  it('SHALL include in every link the target URL, the link type and a title', async () => {
    const ctx = JSON.parse((await get(`${prefix}/01/${GTIN}?linkType=linkset`)).body).linkset[0];
    for (const [rel, targets] of Object.entries(ctx)) {
      if (rel === 'anchor' || rel === 'description') continue;
      expect(rel).to.match(/^https:\/\/ref\.gs1\.org\/voc\/[A-Za-z]+$/);
      for (const t of targets as { href: string; title: string }[]) {
        expect(t.href).to.match(/^https:\/\//);
        expect(t.title).to.be.a('string').and.not.empty;
      }
    }
  });

  it('SHOULD expose the linkset in a Link header on every answer, redirects included', async () => {
    for (const path of [
      `${prefix}/01/${GTIN}`,
      `${prefix}/01/${GTIN}?linkType=gs1:pip`,
      `${prefix}/01/${GTIN}?linkType=linkset`,
    ]) {
      const res = await get(path);
      expect(res.headers.link, path).to.include(
        `<http://localhost:3001${prefix}/01/${GTIN}?linkType=linkset>; rel="linkset"; type="application/linkset+json"`,
      );
    }
  });

  it('SHALL pass on the key=value pairs of the query string when redirecting (linkType excepted)', async () => {
    const res = await get(`${prefix}/01/${GTIN}?linkType=gs1:recallStatus&17=261231&utm_source=pack`);
    expect(res.headers.location).to.equal('https://brand.example/recall?gtin=1&17=261231&utm_source=pack');
  });

  it('SHALL decompress a compressed URI and expose the uncompressed URI in the Link header with rel owl:sameAs', async () => {
    // Compressed by digital-link.js (GS1's compression), not by the service.
    const compressed = digitalLink.Utils.compressWebUri(`http://localhost:3001${prefix}/01/${GTIN}/10/ABC1?17=261231`);
    const path = new URL(compressed).pathname;
    expect(path.split('/')).to.have.length(3); // /<org-slug>/<compressed>
    const res = await get(`${path}?linkType=gs1:recallStatus`);
    expect(res.status, res.body).to.equal(307);
    expect(res.headers.location).to.equal('https://brand.example/recall/abc1?17=261231');
    expect(res.headers.link).to.include(
      `<http://localhost:3001${prefix}/01/${GTIN}/10/ABC1?17=261231>; rel="owl:sameAs"`,
    );
    const linkset = JSON.parse((await get(`${path}?linkType=linkset`)).body);
    expect(linkset.linkset[0].anchor).to.equal(`http://localhost:3001${prefix}/01/${GTIN}/10/ABC1`);
    // On a custom domain the compressed URI is one segment.
    const custom = new URL(digitalLink.Utils.compressWebUri(`https://${customHost}/01/${GTIN}`)).pathname;
    const onCustom = await get(custom, {}, customHost);
    expect(onCustom.status).to.equal(307);
    expect(onCustom.headers.location).to.equal('https://brand.example/custom');
    // A slug that is no compressed URI stays a plain 404.
    expect((await get(`${prefix}/no-such-code`)).status).to.equal(404);
  });

  it('compressed=true: the image encodes the GS1 compressed URI, as GS1 Resolver CE compresses it, and the resolver answers it', async () => {
    // GS1 publishes this pair with its Resolver CE (announcement of compression in v3.0): the
    // compression of https://example.com/01/05392000229648/10/LOT01/21/SERIAL01 is /AQnO2IRCICDKWcnpqQtCQiJABemo.
    const domainId = await insertCustomDomain(svc.app, a.org.id, 'example.com');
    const domainUlid = (await svc.app.db('domains').where({ id: domainId }).first('ulid')).ulid;
    const made = await svc.post('/v1/qr-codes', a.token, {
      slug: 'ce-example',
      type: 'gs1',
      domain_ulid: domainUlid,
      destination: {
        gtin: '05392000229648',
        lot: 'LOT01',
        serial: 'SERIAL01',
        links: [{ link_type: 'gs1:pip', href: 'https://brand.example/ce', title: 'Product page', default: true }],
      },
    });
    expect(made.status, made.text).to.equal(201);
    const image = async (ulid: string, query: string) => {
      const res = await fetch(`${svc.url}/v1/qr-codes/${ulid}/image?format=png&size=400&${query}`, {
        headers: { Authorization: `Bearer ${a.token}` },
      });
      return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
    };
    const compressed = await image(made.body.data.ulid, 'compressed=true');
    expect(compressed.status).to.equal(200);
    expect(await decodeQr(compressed.body)).to.equal('https://example.com/AQnO2IRCICDKWcnpqQtCQiJABemo');
    const plain = await image(made.body.data.ulid, 'compressed=false');
    expect(await decodeQr(plain.body)).to.equal('https://example.com/01/05392000229648/10/LOT01/21/SERIAL01');
    // The product's image on the fallback host: decoded, decompressed, resolved by the resolver.
    const rice = await decodeQr((await image(lotCode, 'compressed=true')).body);
    expect(digitalLink.Utils.decompressWebUri(rice)).to.equal(`http://localhost:3001${prefix}/01/${GTIN}/10/ABC1`);
    const res = await get(`${new URL(rice).pathname}?linkType=gs1:recallStatus`);
    expect(res.status).to.equal(307);
    expect(res.headers.location).to.equal('https://brand.example/recall/abc1');
    const ce = await get('/AQnO2IRCICDKWcnpqQtCQiJABemo', {}, 'example.com');
    expect(ce.status).to.equal(307);
    expect(ce.headers.link).to.include(
      '<https://example.com/01/05392000229648/10/LOT01/21/SERIAL01>; rel="owl:sameAs"',
    );
    // Only a gs1 code has a compressed form.
    const url = await svc.post('/v1/qr-codes', a.token, {
      slug: 'plain-url',
      domain_ulid: fallback,
      destination: 'https://x.example/',
    });
    const refused = await fetch(`${svc.url}/v1/qr-codes/${url.body.data.ulid}/image?compressed=true`, {
      headers: { Authorization: `Bearer ${a.token}` },
    });
    expect(refused.status).to.equal(422);
    expect(((await refused.json()) as { errors: Record<string, string[]> }).errors.compressed[0]).to.match(
      /Only a gs1 code/,
    );
  });

  it('a print run with gs1_compressed encodes its gs1 codes compressed and its other codes as usual', async () => {
    const url = await svc.post('/v1/qr-codes', a.token, {
      slug: 'run-url',
      domain_ulid: fallback,
      destination: 'https://x.example/',
    });
    const run = await svc.post('/v1/qr-codes/exports', a.token, {
      code_ulids: [productCode, url.body.data.ulid],
      format: 'png',
      size: 400,
      gs1_compressed: true,
    });
    expect(run.status, run.text).to.equal(202);
    expect(run.body.data.gs1_compressed).to.equal(true);
    await runJobs(svc.app);
    const zip = await fetch(`${svc.url}/v1/qr-codes/exports/${run.body.data.ulid}/download`, {
      headers: { Authorization: `Bearer ${a.token}` },
    });
    const files = await unzip(Buffer.from(await zip.arrayBuffer()));
    const product = await decodeQr(files.get('rice.png')!);
    expect(digitalLink.Utils.decompressWebUri(product)).to.equal(`http://localhost:3001${prefix}/01/${GTIN}`);
    expect(product).to.not.include('/01/');
    expect(await decodeQr(files.get('run-url.png')!)).to.equal(url.body.data.public_url);
  });

  it('SHOULD tolerate a trailing slash', async () => {
    const res = await get(`${prefix}/01/${GTIN}/`);
    expect(res.status).to.equal(307);
    expect(res.headers.location).to.equal('https://brand.example/rice');
  });

  it('SHALL provide a resolver description file at /.well-known/gs1resolver, per domain, valid against the schema', async () => {
    const onFallback = await get('/.well-known/gs1resolver');
    expect(onFallback.status).to.equal(200);
    const doc = JSON.parse(onFallback.body);
    expectValid(doc, 'gs1-description-file-schema.json');
    // The schema leaves other properties open: the file holds only the ones it defines.
    const defined = Object.keys(schema('gs1-description-file-schema.json').properties as object);
    expect(Object.keys(doc).filter((k) => !defined.includes(k))).to.deep.equal([]);
    expect(doc.supportedPrimaryKeys).to.deep.equal(['01']);
    expect(doc.resolverRoot).to.equal('http://localhost:3001');
    const onCustom = JSON.parse((await get('/.well-known/gs1resolver', {}, customHost)).body);
    expectValid(onCustom, 'gs1-description-file-schema.json');
    expect(onCustom.resolverRoot).to.equal(`https://${customHost}`);
  });

  it('a custom domain answers /01/<gtin> with its own codes only', async () => {
    const res = await get(`/01/${GTIN}`, {}, customHost);
    expect(res.status).to.equal(307);
    expect(res.headers.location).to.equal('https://brand.example/custom');
    expect(res.headers.link).to.include(`<https://${customHost}/01/${GTIN}?linkType=linkset>`);
  });

  it("another organization's GTIN on the same fallback host is 404 under this organization's path", async () => {
    const mine = await svc.post('/v1/qr-codes', b.token, {
      slug: 'pen',
      type: 'gs1',
      domain_ulid: fallback,
      destination: {
        gtin: '4006381333931',
        links: [{ link_type: 'gs1:pip', href: 'https://b.example/pen', title: 'Pen', default: true }],
      },
    });
    expect(mine.status, mine.text).to.equal(201);
    expect((await get(`${prefix}/01/4006381333931`)).status).to.equal(404);
    expect((await get(`/${b.org.slug}/01/4006381333931`)).headers.location).to.equal('https://b.example/pen');
  });

  it('records every resolution once as a scan of the most specific code (HEAD and OPTIONS are not scans)', async () => {
    const before = await scans(lotCode);
    await get(`${prefix}/01/${GTIN}/10/ABC1`);
    await get(`${prefix}/01/${GTIN}/10/ABC1?linkType=linkset`);
    await get(`${prefix}/01/${GTIN}/10/ABC1`, {}, FALLBACK, 'HEAD');
    await get(`${prefix}/01/${GTIN}/10/ABC1`, {}, FALLBACK, 'OPTIONS');
    expect(await scans(lotCode)).to.equal(before + 2);
    const product = await scans(productCode);
    expect(product).to.be.greaterThan(0);
  });

  it("records the GTIN, cpv, lot, serial and the link type asked and served of a resolution in its scan's own row, and no second record", async () => {
    const db = svc.app.ch.database;
    const count = async (table: string) =>
      Number((await chRows<{ c: string }>(svc.app, `SELECT count() AS c FROM ${db}.${table}`))[0].c);
    const [scansBefore, oldRecordsBefore] = [await count('scan_events'), await count('gs1_resolutions')];
    await get(`${prefix}/01/${GTIN}/10/LOT9/21/SER1?linkType=gs1:recipeInfo`, { 'Accept-Language': 'fr' });
    await get(`${prefix}/01/${GTIN}/10/LOT9/21/SER1?linkType=gs1:epil`);
    await get(`${prefix}/01/${GTIN}/22/V%2F1/10/LOT9/21/SER1`, { Accept: 'application/linkset+json' });
    await rd.scans.flush();
    const rows = await chRows<Record<string, string>>(
      svc.app,
      `SELECT gtin, cpv, lot, serial, link_type_asked, link_type_served, code_id
         FROM ${db}.scan_events WHERE serial = 'SER1' ORDER BY scanned_at, scan_id`,
    );
    expect(rows.map((r) => [r.gtin, r.cpv, r.lot, r.serial, r.link_type_asked, r.link_type_served])).to.deep.equal([
      [GTIN, '', 'LOT9', 'SER1', 'gs1:recipeInfo', 'gs1:recipeInfo'],
      [GTIN, '', 'LOT9', 'SER1', 'gs1:epil', ''],
      [GTIN, 'V/1', 'LOT9', 'SER1', 'linkset', 'linkset'],
    ]);
    // One row per resolution, in scan_events only: nothing is written to gs1_resolutions any more.
    expect(await count('scan_events')).to.equal(scansBefore + 3);
    expect(await count('gs1_resolutions')).to.equal(oldRecordsBefore);
    // A lot and serial without a code of their own are scans of the product.
    const productId = (await svc.app.db('qr_codes').where({ ulid: productCode }).first('id')).id;
    for (const r of rows) expect(Number(r.code_id)).to.equal(Number(productId));
  });

  it('analytics per product and per lot: dimension=gtin and dimension=lot, bots left out, per organization', async () => {
    const GT = '04012345000009';
    await createProduct('stats-product', GT, 'https://brand.example/stats');
    const lotMade = await svc.post('/v1/qr-codes', a.token, {
      slug: 'stats-lot',
      type: 'gs1',
      domain_ulid: fallback,
      destination: { gtin: GT, lot: 'L1', links: [] },
    });
    expect(lotMade.status, lotMade.text).to.equal(201);
    for (const path of ['', '/10/L1', '/10/L1', '/10/L2', '/10/L2', '/10/L2']) await get(`${prefix}/01/${GT}${path}`);
    await hit(rd.port, FALLBACK, `${prefix}/01/${GT}/10/L1`, {
      headers: { 'User-Agent': 'Googlebot/2.1 (+http://www.google.com/bot.html)' },
    });
    // Another organization resolves the same GTIN under its own path: not in a's numbers.
    const other = await svc.post('/v1/qr-codes', b.token, {
      slug: 'stats-b',
      type: 'gs1',
      domain_ulid: fallback,
      destination: {
        gtin: GT,
        links: [{ link_type: 'gs1:pip', href: 'https://b.example/', title: 'B', default: true }],
      },
    });
    expect(other.status).to.equal(201);
    await get(`/${b.org.slug}/01/${GT}/10/L1`);
    await rd.scans.flush();
    const entry = (
      body: { data: { dimension_breakdown: { key: string; label: string; scans: number }[] } },
      key: string,
    ) => body.data.dimension_breakdown.find((e) => e.key === key);
    const byGtin = await svc.get('/v1/analytics?dimension=gtin&range=7', a.token);
    expect(byGtin.status, byGtin.text).to.equal(200);
    expect(byGtin.body.data.dimension_label).to.equal('Product (GTIN)');
    expect(entry(byGtin.body, GT)).to.include({ label: GT, scans: 6 });
    const byLot = await svc.get('/v1/analytics?dimension=lot&range=7', a.token);
    expect(entry(byLot.body, `${GT}/L1`)).to.include({ label: `${GT} lot L1`, scans: 2 });
    expect(entry(byLot.body, `${GT}/L2`)).to.include({ scans: 3 });
    const withBots = await svc.get('/v1/analytics?dimension=lot&range=7&include_bots=true', a.token);
    expect(entry(withBots.body, `${GT}/L1`)).to.include({ scans: 3 });
    const ofB = await svc.get('/v1/analytics?dimension=lot&range=7', b.token);
    expect(ofB.body.data.dimension_breakdown).to.deep.equal([
      { key: `${GT}/L1`, label: `${GT} lot L1`, scans: 1, uniques: 1 },
    ]);
    // Per code: the lot's code answered L1 only (L2 has no code: the product's answered it).
    const perCode = await svc.get(`/v1/analytics/qr-codes/${lotMade.body.data.ulid}?dimension=lot&range=7`, a.token);
    expect(perCode.body.data.dimension_breakdown.map((e: { key: string }) => e.key)).to.deep.equal([`${GT}/L1`]);
    const exported = await svc.get('/v1/analytics/export?dimension=gtin&range=7', a.token);
    expect(exported.body.data.csv_rows).to.deep.include({
      date: new Date().toISOString().slice(0, 10),
      gtin: GT,
      scans: 6,
    });
    // MCP: analytics_read takes the same dimensions.
    const tool = await toolOk(svc, a.token, 'analytics_read', { dimension: 'lot', range: 7 });
    expect(tool.data.dimension_breakdown.find((e: { key: string }) => e.key === `${GT}/L2`).scans).to.equal(3);
  });

  describe('status, dates, schedule and cap: a gs1 code answers like other codes', () => {
    const page = (href: string) => [{ link_type: 'gs1:pip', href, title: 'Product page', default: true }];
    const product = async (gtin: string, extra: Record<string, unknown> = {}) => {
      const res = await svc.post('/v1/qr-codes', a.token, {
        slug: `avail-${gtin}-${Object.keys(extra).join('-') || 'plain'}`,
        type: 'gs1',
        domain_ulid: fallback,
        destination: { gtin, links: page(`https://brand.example/${gtin}`) },
        ...extra,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.data.ulid as string;
    };
    const lot = async (gtin: string, lotNo: string, extra: Record<string, unknown> = {}) => {
      const res = await svc.post('/v1/qr-codes', a.token, {
        slug: `avail-${gtin}-${lotNo}`,
        type: 'gs1',
        domain_ulid: fallback,
        destination: { gtin, lot: lotNo, links: page(`https://brand.example/${gtin}/${lotNo}`) },
        ...extra,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body.data.ulid as string;
    };
    const until = (path: string, status: number) =>
      waitFor(
        () => get(path),
        (r) => r.status === status,
      );

    it('paused: a paused lot falls back to its product, a paused product is 404', async () => {
      await product('5901234123457');
      const lotUlid = await lot('5901234123457', 'P1');
      expect((await get(`${prefix}/01/5901234123457/10/P1`)).headers.location).to.equal(
        'https://brand.example/5901234123457/P1',
      );
      await svc.patch(`/v1/qr-codes/${lotUlid}`, a.token, { status: 'paused' });
      const fallen = await until(`${prefix}/01/5901234123457/10/P1`, 307);
      await waitFor(
        async () => (await get(`${prefix}/01/5901234123457/10/P1`)).headers.location,
        (l) => l === 'https://brand.example/5901234123457',
      );
      expect(fallen.headers['access-control-allow-origin']).to.equal('*');
      const productUlid = (
        await svc.app.db('qr_codes').whereRaw("slug like '%/avail-5901234123457-plain'").first('ulid')
      ).ulid;
      await svc.patch(`/v1/qr-codes/${productUlid}`, a.token, { status: 'paused' });
      const gone = await until(`${prefix}/01/5901234123457`, 404);
      expect(gone.headers['access-control-allow-origin']).to.equal('*');
    });

    it('expired, not begun, outside the schedule: 410 with CORS, never 200; a lot of them falls back to the product', async () => {
      const past = new Date(Date.now() - 3600_000).toISOString();
      const future = new Date(Date.now() + 86_400_000).toISOString();
      await product('96385074', { expire_at: past, date_begin: new Date(Date.now() - 7200_000).toISOString() });
      const expired = await get(`${prefix}/01/96385074`);
      expect(expired.status, expired.body).to.equal(410);
      expect(expired.body).to.match(/no longer available/);
      expect(expired.headers['access-control-allow-origin']).to.equal('*');
      await product('4000417025005', { date_begin: future });
      const early = await get(`${prefix}/01/4000417025005?linkType=linkset`);
      expect(early.status).to.equal(410);
      expect(early.body).to.match(/not available yet/);
      // A schedule whose only window is never now (a day that is not today).
      const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
      const other = days[(new Date().getUTCDay() + 2) % 7];
      await product('8712345678906', {
        schedule: { enabled: true, timezone: 'UTC', windows: [{ days: [other], start: '00:00', end: '00:01' }] },
      });
      expect((await get(`${prefix}/01/8712345678906`)).status).to.equal(410);
      // An expired lot of a live product: the product answers.
      await product('7622210449283');
      await lot('7622210449283', 'OLD', { expire_at: past, date_begin: new Date(Date.now() - 7200_000).toISOString() });
      const fallback = await get(`${prefix}/01/7622210449283/10/OLD`);
      expect(fallback.status).to.equal(307);
      expect(fallback.headers.location).to.equal('https://brand.example/7622210449283');
    });

    it('redirect_cap: resolutions beyond the cap are 410 and not recorded', async () => {
      const capped = await product('5000112637922', { redirect_cap: 2 });
      const before = await scans(capped);
      expect((await get(`${prefix}/01/5000112637922`)).status).to.equal(307);
      expect((await get(`${prefix}/01/5000112637922?linkType=linkset`)).status).to.equal(200);
      const third = await get(`${prefix}/01/5000112637922`);
      expect(third.status).to.equal(410);
      expect(third.body).to.match(/limit/);
      expect(third.headers['access-control-allow-origin']).to.equal('*');
      expect(await scans(capped)).to.equal(before + 2);
    });

    it('a password is refused on a gs1 code (422): the resolver has no password step', async () => {
      const pro = await svc.createOrg({ plan: 'professional_monthly' });
      const res = await svc.post('/v1/qr-codes', pro.token, {
        slug: 'locked',
        type: 'gs1',
        domain_ulid: fallback,
        password: 'secret-1234',
        destination: { gtin: GTIN, links: page('https://brand.example/x') },
      });
      expect(res.status, res.text).to.equal(422);
      expect(res.body.errors.password[0]).to.match(/cannot have a password/);
    });
  });

  it('replays the journals of a version before clickhouse/0026 (each resolution a scan row and a gs1_resolutions row) exactly once, and counts them with the new rows', async () => {
    const GT = '07612345678900';
    const product = await createProduct('legacy-product', GT, 'https://brand.example/legacy');
    const codeId = Number((await svc.app.db('qr_codes').where({ ulid: product }).first('id')).id);
    // What that version journaled for four resolutions of the product before it was killed: lot OLD1
    // twice (once by a bot), the product, lot OLD2; each a scan row in the contract's 17 columns and
    // a gs1_resolutions row under the same scan_id, in two journals named by their batches' tokens.
    const now = Date.now();
    const resolutions = [
      { lot: 'OLD1', bot: 0 },
      { lot: 'OLD1', bot: 1 },
      { lot: '', bot: 0 },
      { lot: 'OLD2', bot: 0 },
    ].map((r, i) => ({ ...r, at: now - 10_000 + i, scanId: ulid(now - 10_000 + i) }));
    const scanLines = resolutions
      .map((r) =>
        tsvLine(
          {
            ...scanRow(r.at, { org_id: a.org.id, code_id: codeId, is_bot: r.bot as 0 | 1, scan_id: r.scanId }),
            scanned_at: clickHouseTime(r.at),
          },
          SCAN_EVENT_COLUMNS,
        ),
      )
      .join('');
    const gs1Lines = resolutions
      .map((r) =>
        tsvLine(
          {
            scan_id: r.scanId,
            scanned_at: clickHouseTime(r.at),
            org_id: a.org.id,
            brand_id: 0,
            domain_id: 0,
            code_id: codeId,
            gtin: GT,
            cpv: '',
            lot: r.lot,
            serial: '',
            link_type_asked: '',
            link_type_served: 'gs1:pip',
            visitor_hash: String(now - r.at),
            is_bot: r.bot,
          },
          GS1_RESOLUTION_COLUMNS,
        ),
      )
      .join('');
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const files = {
      [`scan_events-${gone}-${ulid()}.tsv`]: scanLines,
      [`gs1_resolutions-${gone}-${ulid()}.tsv`]: gs1Lines,
    };
    const leave = async (dir: string) => {
      await fs.mkdir(dir, { recursive: true });
      for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text);
    };
    const db = svc.app.ch.database;
    const stored = async () =>
      (
        await chRows<{ t: string; c: string; ids: string }>(
          svc.app,
          `SELECT 'scan_events' AS t, count() AS c, uniqExact(scan_id) AS ids FROM ${db}.scan_events WHERE code_id = {id:UInt64}
           UNION ALL
           SELECT 'gs1_resolutions' AS t, count() AS c, uniqExact(scan_id) AS ids FROM ${db}.gs1_resolutions WHERE code_id = {id:UInt64}
`,
          { id: codeId },
        )
      )
        .map((r) => [r.t, Number(r.c), Number(r.ids)])
        .sort();
    // Replayed before serving (leftovers.ts, as the primary of several redirect processes does).
    const spill = path.join(svc.app.config.dataDir, 'spill');
    await leave(spill);
    await replayLeftovers(svc.app);
    const left = (dir: string) => fs.readdir(dir).then((f) => f.filter((n) => n.includes(`-${gone}-`)));
    expect(await left(spill)).to.deep.equal([]);
    const once = [
      ['gs1_resolutions', 4, 4],
      ['scan_events', 4, 4],
    ];
    expect(await stored()).to.deep.equal(once);
    // The same journals once more (a replay cut short between its inserts and the files' removal),
    // found by a redirect listener at its start, as a single process does: nothing is added.
    const again = path.join(svc.app.config.dataDir, 'spill-legacy-gs1');
    await leave(again);
    const rd2 = await startRedirectListener(svc.app, 0, '127.0.0.1', { spillDir: again, tlsPort: null });
    try {
      await rd2.scans.settled();
      await rd2.gs1Replay.settled();
      expect(await left(again)).to.deep.equal([]);
    } finally {
      await rd2.close();
    }
    expect(await stored()).to.deep.equal(once);
    // Two resolutions recorded now, in their scans' rows: analytics count the old and the new once each.
    await get(`${prefix}/01/${GT}/10/OLD1`);
    await get(`${prefix}/01/${GT}/10/NEW1`);
    await rd.scans.flush();
    expect(await stored()).to.deep.equal([
      ['gs1_resolutions', 4, 4],
      ['scan_events', 6, 6],
    ]);
    const breakdown = async (dimension: string, bots = false) =>
      Object.fromEntries(
        (
          await svc.get(
            `/v1/analytics/qr-codes/${product}?dimension=${dimension}&range=7${bots ? '&include_bots=true' : ''}`,
            a.token,
          )
        ).body.data.dimension_breakdown.map((e: { key: string; scans: number }) => [e.key, e.scans]),
      );
    expect(await breakdown('gtin')).to.deep.equal({ [GT]: 5 });
    expect(await breakdown('gtin', true)).to.deep.equal({ [GT]: 6 });
    expect(await breakdown('lot')).to.deep.equal({ [`${GT}/OLD1`]: 2, [`${GT}/OLD2`]: 1, [`${GT}/NEW1`]: 1 });
    expect(await breakdown('lot', true)).to.deep.equal({ [`${GT}/OLD1`]: 3, [`${GT}/OLD2`]: 1, [`${GT}/NEW1`]: 1 });
    // The raw export keeps the contract's fields: the GS1 dimensions are not among them.
    const raw = await svc.get(`/v1/analytics/qr-codes/${product}/raw-export?range=7`, a.token);
    expect(raw.body.data.rows).to.have.length(5);
    for (const row of raw.body.data.rows)
      expect(row).not.to.have.any.keys('gtin', 'cpv', 'lot', 'serial', 'link_type_asked', 'link_type_served');
  });

  it('a change of the links is served at once (the cache follows the code)', async () => {
    const res = await svc.patch(`/v1/qr-codes/${lotCode}`, a.token, {
      destination: {
        gtin: GTIN,
        lot: 'ABC1',
        links: [{ link_type: 'gs1:recallStatus', href: 'https://brand.example/recall/abc1-v2', title: 'Lot ABC1' }],
      },
    });
    expect(res.status, res.text).to.equal(200);
    const location = await waitFor(
      async () => (await get(`${prefix}/01/${GTIN}/10/ABC1?linkType=gs1:recallStatus`)).headers.location,
      (l) => !!l?.endsWith('-v2'),
    );
    expect(location).to.equal('https://brand.example/recall/abc1-v2');
  });
});
