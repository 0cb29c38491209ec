// qrctl's gs1 commands: products and lots made from flags, listed, their links changed, their
// image written (compressed too) and a CSV of products imported, through the API's schemas and
// services; another organization's code is not found.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import digitalLink from 'digital-link.js';
import { runJobs } from '../helpers/jobs.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { qrctl, runQrctl } from '../helpers/web-client.js';

const PIP = { link_type: 'gs1:pip', href: 'https://brand.example/rice', title: 'Product page', default: true };

describe('qrctl gs1', function () {
  this.timeout(90_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let dir: string;
  let product: string;

  before(async () => {
    svc = await startTestService();
    a = await svc.createOrg();
    b = await svc.createOrg();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'qrctl-gs1-'));
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await svc?.close();
  });

  it('gs1 create: a product from flags, its links inline; a lot with its links from a file', async () => {
    const made = await qrctl(svc.app, [
      'gs1',
      'create',
      '--org',
      a.org.slug,
      '--gtin',
      '9506000134352',
      '--description',
      'Risotto rice',
      '--data',
      '17=261231',
      '--links',
      JSON.stringify([PIP]),
    ]);
    product = made.code.ulid;
    expect(made.code.type).to.equal('gs1');
    expect(made.code.slug).to.equal(`${a.org.slug}/09506000134352`);
    expect(made.code.public_url).to.equal(`http://localhost:3001/${a.org.slug}/01/09506000134352?17=261231`);
    const file = path.join(dir, 'lot.json');
    await fs.writeFile(
      file,
      JSON.stringify([{ link_type: 'gs1:recallStatus', href: 'https://brand.example/recall', title: 'Recall' }]),
    );
    const lot = await qrctl(svc.app, [
      'gs1',
      'create',
      '--org',
      a.org.slug,
      '--gtin',
      '09506000134352',
      '--lot',
      'A1',
      '--links',
      file,
    ]);
    expect(lot.code.destination).to.deep.include({ gtin: '09506000134352', lot: 'A1' });
    expect(lot.code.slug).to.equal(`${a.org.slug}/09506000134352-A1`);
  });

  it('gs1 create refuses a wrong check digit, an unknown link type and two defaults, saying what is wrong (exit 2)', async () => {
    const bad = async (...extra: string[]) =>
      runQrctl(svc.app, ['gs1', 'create', '--org', a.org.slug, '--slug', 'bad', ...extra, '--json']);
    const digit = await bad('--gtin', '9506000134353', '--links', JSON.stringify([PIP]));
    expect(digit.code).to.equal(2);
    expect(JSON.parse(digit.out).error.errors['destination.gtin'][0]).to.equal(
      'Wrong check digit: 9506000134353 should end in 2, not 3.',
    );
    const type = await bad('--gtin', '4006381333931', '--links', JSON.stringify([{ ...PIP, link_type: 'gs1:nope' }]));
    expect(JSON.parse(type.out).error.errors['destination.links.0.link_type'][0]).to.match(/Unknown link type/);
    const two = await bad(
      '--gtin',
      '4006381333931',
      '--links',
      JSON.stringify([PIP, { ...PIP, href: 'https://x.example/' }]),
    );
    expect(JSON.parse(two.out).error.errors['destination.links'][0]).to.match(/2 links are the default/);
  });

  it('gs1 list: the products and lots, of one GTIN when asked', async () => {
    await qrctl(svc.app, [
      'gs1',
      'create',
      '--org',
      a.org.slug,
      '--gtin',
      '96385074',
      '--links',
      JSON.stringify([PIP]),
    ]);
    const all = await qrctl(svc.app, ['gs1', 'list', '--org', a.org.slug]);
    expect(all.codes).to.have.length(3);
    const rice = await qrctl(svc.app, ['gs1', 'list', '--org', a.org.slug, '--gtin', '9506000134352']);
    expect(rice.codes.map((c: { lot: string | null }) => c.lot)).to.deep.equal([null, 'A1']);
    expect(rice.codes[0]).to.include({ gtin: '09506000134352', links: 1, status: 'active' });
    expect((await qrctl(svc.app, ['gs1', 'list', '--org', b.org.slug])).codes).to.deep.equal([]);
  });

  it('gs1 links: add, remove a link type, replace; an unknown link type is refused', async () => {
    const added = await qrctl(svc.app, [
      'gs1',
      'links',
      product,
      '--org',
      a.org.slug,
      '--add',
      JSON.stringify({ link_type: 'gs1:recipeInfo', href: 'https://brand.example/recipes', title: 'Recipes' }),
    ]);
    expect(added.code.destination.links.map((l: { link_type: string }) => l.link_type)).to.deep.equal([
      'gs1:pip',
      'gs1:recipeInfo',
    ]);
    const removed = await qrctl(svc.app, [
      'gs1',
      'links',
      product,
      '--org',
      a.org.slug,
      '--remove-type',
      'gs1:recipeInfo',
    ]);
    expect(removed.code.destination.links).to.have.length(1);
    const replaced = await qrctl(svc.app, [
      'gs1',
      'links',
      product,
      '--org',
      a.org.slug,
      '--replace',
      JSON.stringify([{ ...PIP, href: 'https://brand.example/rice-v2' }]),
    ]);
    expect(replaced.code.destination.links[0].href).to.equal('https://brand.example/rice-v2');
    expect(replaced.code.destination.data).to.deep.equal({ '17': '261231' });
    const unknown = await runQrctl(svc.app, [
      'gs1',
      'links',
      product,
      '--org',
      a.org.slug,
      '--add',
      JSON.stringify({ link_type: 'gs1:nope', href: 'https://x.example/', title: 'X' }),
    ]);
    expect(unknown.code).to.equal(2);
    expect(unknown.err).to.match(/Unknown link type "gs1:nope"/);
    const theirs = await runQrctl(svc.app, ['gs1', 'links', product, '--org', b.org.slug, '--remove-type', 'gs1:pip']);
    expect(theirs.code).to.equal(2);
    expect(theirs.err).to.match(/not found/i);
  });

  it('codes image: the PNG encodes the Digital Link URI, with --compressed its GS1 compressed form', async () => {
    const plain = path.join(dir, 'rice.png');
    const out = await qrctl(svc.app, ['codes', 'image', product, '--org', a.org.slug, '--out', plain, '--size', '400']);
    expect(out.image).to.include({ file: plain, format: 'png' });
    const uri = `http://localhost:3001/${a.org.slug}/01/09506000134352?17=261231`;
    expect(await decodeQr(await fs.readFile(plain))).to.equal(uri);
    const small = path.join(dir, 'rice-compressed.png');
    await qrctl(svc.app, [
      'codes',
      'image',
      product,
      '--org',
      a.org.slug,
      '--out',
      small,
      '--size',
      '400',
      '--compressed',
    ]);
    const compressed = await decodeQr(await fs.readFile(small));
    expect(compressed).to.not.equal(uri);
    expect(digitalLink.Utils.decompressWebUri(compressed)).to.equal(uri);
    const bad = await runQrctl(svc.app, [
      'codes',
      'image',
      product,
      '--org',
      a.org.slug,
      '--out',
      small,
      '--size',
      '3',
    ]);
    expect(bad.code).to.equal(2);
  });

  it('gs1 import: a CSV of products staged, confirmed and created; a bad line refused by line', async () => {
    const file = path.join(dir, 'products.csv');
    await fs.writeFile(
      file,
      [
        'slug,gtin,lot,link_type,href,title,default',
        'soap,4000417025005,,gs1:pip,https://brand.example/soap,Soap,yes',
        'soap-l1,4000417025005,L1,gs1:recallStatus,https://brand.example/soap/recall,Recall,',
      ].join('\n'),
    );
    const staged = await qrctl(svc.app, ['gs1', 'import', '--org', a.org.slug, '--file', file]);
    expect(staged).to.include({ status: 'staged', codes: 2 });
    const queued = await qrctl(svc.app, [
      'gs1',
      'confirm',
      staged.import,
      '--org',
      a.org.slug,
      '--confirm-token',
      staged.confirm_token,
    ]);
    expect(queued.status).to.equal('queued');
    await runJobs(svc.app);
    const soap = await qrctl(svc.app, ['gs1', 'list', '--org', a.org.slug, '--gtin', '4000417025005']);
    expect(soap.codes.map((c: { slug: string }) => c.slug)).to.deep.equal([
      `${a.org.slug}/soap`,
      `${a.org.slug}/soap-l1`,
    ]);
    await fs.writeFile(
      file,
      'slug,gtin,link_type,href,title,default\nx,4000417025006,gs1:pip,https://x.example/,X,yes\n',
    );
    const bad = await runQrctl(svc.app, ['gs1', 'import', '--org', a.org.slug, '--file', file, '--yes', '--json']);
    expect(bad.code).to.equal(2);
    expect(JSON.parse(bad.out).error.errors['csv.2.gtin'][0]).to.match(/^Line 2: Wrong check digit/);
  });
});
