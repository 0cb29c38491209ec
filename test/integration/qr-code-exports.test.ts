// Print runs: POST /v1/qr-codes/exports, its progress and the ZIP download, rendered by the real
// job and read back with a real ZIP reader (yauzl) and a real QR decoder (ZXing-C++, test/helpers/qr-decode.ts).
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { pruneExports } from '../../server/qr-code-exports/job.js';
import { runJobs as runJobsOnce } from '../helpers/jobs.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { decodeQr } from '../helpers/qr-decode.js';
import { unzip } from '../helpers/zip.js';

const MAX = 2000;

interface ManifestLine {
  slug: string;
  public_url: string;
  destination: string;
  file: string;
}

describe('Print runs: /v1/qr-codes/exports', function () {
  this.timeout(180_000);
  let svc: TestService;
  let a: TestOrg;
  let b: TestOrg;
  let domain: string;
  let brandA: string;
  let importA: string;
  const runJobs = () => runJobsOnce(svc.app);

  async function download(ulid: string, token: string): Promise<{ status: number; headers: Headers; body: Buffer }> {
    const res = await fetch(`${svc.url}/v1/qr-codes/exports/${ulid}/download`, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/zip' },
    });
    return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
  }

  async function codeUlids(org: TestOrg, n: number): Promise<string[]> {
    return (await svc.app.db('qr_codes').where({ org_id: org.org.id }).orderBy('id').limit(n)).map((r) => r.ulid);
  }

  before(async () => {
    svc = await startTestService({ config: { exportMaxCodes: MAX } });
    domain = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    a = await svc.createOrg({ plan: 'business_monthly' });
    b = await svc.createOrg({ plan: 'business_monthly' });
    brandA = (await svc.post('/v1/brands', a.token, { name: 'Menus' })).body.data.ulid;
    // 2,000 codes through a real bulk import, all in brand A.
    const rows = Array.from({ length: MAX }, (_, i) => ({
      slug: `menu-${i}`,
      destination: `https://example.com/t/${i}`,
    }));
    const staged = await svc.post('/v1/qr-codes/bulk', a.token, {
      rows,
      defaults: { domain_ulid: domain, brand_ulid: brandA },
    });
    importA = staged.body.data.ulid;
    await svc.post(`/v1/qr-codes/bulk/${importA}/confirm`, a.token, { confirm_token: staged.body.meta.confirm_token });
    await runJobs();
    for (const [i, org] of [b, b].entries()) {
      const res = await svc.post('/v1/qr-codes', org.token, {
        slug: `other-${i}`,
        destination: 'https://example.org/',
        domain_ulid: domain,
      });
      expect(res.status, res.text).to.equal(201);
    }
  });
  after(() => svc.close());

  it('exports the 2,000 codes of a bulk import as a ZIP of 2,000 decodable PNGs and a matching manifest', async () => {
    const used = (await svc.get('/v1/status', a.token)).body.api.calls_used_month;
    const created = await svc.post('/v1/qr-codes/exports', a.token, {
      bulk_import_ulid: importA,
      format: 'png',
      size: 128,
    });
    expect(created.status, created.text).to.equal(202);
    expect(created.body.data).to.deep.include({
      status: 'queued',
      format: 'png',
      size: 128,
      total: MAX,
      done: 0,
      progress_percent: 0,
      download_url: null,
      selection: { kind: 'bulk_import', ulid: importA },
    });
    // One metered call for the whole run (plus the status read itself).
    expect((await svc.get('/v1/status', a.token)).body.api.calls_used_month).to.equal(used + 1);
    const ulid = created.body.data.ulid;
    expect((await download(ulid, a.token)).status).to.equal(409);

    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/exports/${ulid}`, a.token)).body.data;
    expect(done).to.deep.include({ status: 'completed', total: MAX, done: MAX, progress_percent: 100 });
    expect(done.download_url).to.equal(`/v1/qr-codes/exports/${ulid}/download`);

    const zip = await download(ulid, a.token);
    expect(zip.status).to.equal(200);
    expect(zip.headers.get('content-type')).to.equal('application/zip');
    expect(zip.headers.get('content-disposition')).to.equal(`attachment; filename="qr-codes-${ulid}.zip"`);
    expect(zip.body.length).to.equal(done.bytes);
    const files = await unzip(zip.body);
    expect(files.size).to.equal(MAX + 1);

    const manifest = parse(files.get('manifest.csv') as Buffer, { columns: true }) as ManifestLine[];
    expect(Object.keys(manifest[0])).to.deep.equal(['slug', 'public_url', 'destination', 'file']);
    expect(manifest).to.have.length(MAX);
    const codes = new Map<string, { public_url: string; destination: unknown }>();
    for (const c of (await svc.get('/v1/qr-codes', a.token)).body.data) codes.set(c.slug.split('/')[1], c);
    manifest.forEach((line, i) => {
      // The import's row order is the file order.
      expect(line.slug).to.equal(`menu-${i}`);
      expect(line.file).to.equal(`menu-${i}.png`);
      expect(line.destination).to.equal(`https://example.com/t/${i}`);
      expect(line.public_url).to.equal(codes.get(line.slug)?.public_url);
    });
    // Every file decodes to its code's public_url (the redirect), never the destination.
    const undecoded: string[] = [];
    for (const line of manifest) {
      const text = await decodeQr(files.get(line.file) as Buffer).catch(() => null);
      if (text !== line.public_url) undecoded.push(line.file);
    }
    expect(undecoded).to.deep.equal([]);
  });

  it('exports a list of codes as SVG files in the order given', async () => {
    const [first, second, third] = await codeUlids(a, 3);
    const res = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [third, first, second] });
    expect(res.status, res.text).to.equal(202);
    expect(res.body.data).to.deep.include({
      format: 'svg',
      size: null,
      total: 3,
      selection: { kind: 'codes', ulid: null },
    });
    await runJobs();
    const files = await unzip((await download(res.body.data.ulid, a.token)).body);
    expect([...files.keys()]).to.deep.equal(['menu-2.svg', 'menu-0.svg', 'menu-1.svg', 'manifest.csv']);
    const manifest = parse(files.get('manifest.csv') as Buffer, { columns: true }) as ManifestLine[];
    expect(manifest.map((l) => l.file)).to.deep.equal(['menu-2.svg', 'menu-0.svg', 'menu-1.svg']);
    // The SVG files themselves, rasterised, decode to their codes' public URLs.
    for (const line of manifest) expect(await decodeQr(files.get(line.file) as Buffer, 300)).to.equal(line.public_url);
  });

  it('refuses a selection that is not exactly one of code_ulids, brand_ulid and bulk_import_ulid', async () => {
    const none = await svc.post('/v1/qr-codes/exports', a.token, { format: 'svg' });
    expect(none.status).to.equal(422);
    expect(none.body.errors).to.have.keys(['code_ulids']);
    const two = await svc.post('/v1/qr-codes/exports', a.token, { brand_ulid: brandA, bulk_import_ulid: importA });
    expect(two.status).to.equal(422);
    expect(two.body.errors).to.have.keys(['brand_ulid', 'bulk_import_ulid']);
    const bad = await svc.post('/v1/qr-codes/exports', a.token, { brand_ulid: brandA, format: 'gif', size: 10 });
    expect(bad.status).to.equal(422);
    expect(bad.body.errors).to.have.keys(['format', 'size']);
  });

  it(`refuses more than QR_EXPORT_MAX_CODES codes (${MAX} here) with 422 and creates nothing`, async () => {
    const before = await svc.app.db('qr_code_exports').count<{ c: string }[]>('* as c');
    const ulids = await codeUlids(a, MAX);
    const tooMany = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [...ulids, ulids[0]] });
    expect(tooMany.status).to.equal(422);
    expect(tooMany.body.errors).to.deep.equal({ code_ulids: [`At most ${MAX} codes per export; got ${MAX + 1}.`] });
    // One more code in the brand makes it too large.
    const extra = await svc.post('/v1/qr-codes', a.token, {
      slug: 'one-more',
      destination: 'https://example.com/more',
      domain_ulid: domain,
      brand_ulid: brandA,
    });
    const brand = await svc.post('/v1/qr-codes/exports', a.token, { brand_ulid: brandA });
    expect(brand.status).to.equal(422);
    expect(brand.body.errors).to.deep.equal({
      brand_ulid: [`At most ${MAX} codes per export; this selection has more.`],
    });
    await svc.delete(`/v1/qr-codes/${extra.body.data.ulid}`, a.token);
    // PNGs above 1024 px: the limit shrinks with their pixel count (2000 × (1024/4096)² = 125).
    const big = await svc.post('/v1/qr-codes/exports', a.token, {
      code_ulids: ulids.slice(0, 126),
      format: 'png',
      size: 4096,
    });
    expect(big.status).to.equal(422);
    expect(big.body.errors).to.deep.equal({ code_ulids: ['At most 125 codes per export of 4096 px PNGs; got 126.'] });
    const after = await svc.app.db('qr_code_exports').count<{ c: string }[]>('* as c');
    expect(after).to.deep.equal(before);
    expect(await svc.app.db('qr_code_export_items').whereNotIn('export_id', svc.app.db('qr_code_exports').select('id')))
      .to.be.empty;
  });

  it('answers another organization’s codes, brand, bulk import and style like missing ones', async () => {
    const [foreignCode] = await codeUlids(b, 1);
    const [own] = await codeUlids(a, 1);
    const codes = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [own, foreignCode] });
    expect(codes.status).to.equal(422);
    expect(codes.body.errors).to.deep.equal({ 'code_ulids.1': ['No such QR code in this organization.'] });
    const brand = await svc.post('/v1/qr-codes/exports', b.token, { brand_ulid: brandA });
    expect(brand.body.errors).to.deep.equal({ brand_ulid: ['No such brand in this organization.'] });
    const imp = await svc.post('/v1/qr-codes/exports', b.token, { bulk_import_ulid: importA });
    expect(imp.body.errors).to.deep.equal({ bulk_import_ulid: ['No such bulk import in this organization.'] });
    const style = await svc.post('/v1/qr-styles', a.token, { name: 'Plain', config: {} });
    expect(style.status, style.text).to.equal(201);
    const styled = await svc.post('/v1/qr-codes/exports', b.token, {
      code_ulids: [foreignCode],
      style_ulid: style.body.data.ulid,
    });
    expect(styled.body.errors).to.deep.equal({ style_ulid: ['No such style in this organization.'] });
  });

  it('answers 404 for another organization’s export and its download', async () => {
    const [own] = await codeUlids(a, 1);
    const res = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [own] });
    await runJobs();
    const ulid = res.body.data.ulid;
    expect((await svc.get(`/v1/qr-codes/exports/${ulid}`, b.token)).status).to.equal(404);
    const foreign = await download(ulid, b.token);
    expect(foreign.status).to.equal(404);
    expect(JSON.parse(foreign.body.toString()).code).to.equal('not_found');
    expect((await download(ulid, a.token)).status).to.equal(200);
  });

  it('needs codes.view, like the image itself', async () => {
    const writer = await svc.createToken(a.org, { abilities: ['codes.create'] });
    const res = await svc.post('/v1/qr-codes/exports', writer, { brand_ulid: brandA });
    expect(res.status).to.equal(403);
    expect(res.body.required_ability).to.equal('codes.view');
    const viewer = await svc.createToken(a.org, { role: 'viewer', abilities: ['codes.view'] });
    const [own] = await codeUlids(a, 1);
    expect((await svc.post('/v1/qr-codes/exports', viewer, { code_ulids: [own] })).status).to.equal(202);
  });

  it('refuses a bulk import that has not finished with 409', async () => {
    const staged = await svc.post('/v1/qr-codes/bulk', a.token, {
      rows: [{ slug: 'later', destination: 'https://example.com/later' }],
      defaults: { domain_ulid: domain },
    });
    const res = await svc.post('/v1/qr-codes/exports', a.token, { bulk_import_ulid: staged.body.data.ulid });
    expect(res.status).to.equal(409);
    expect(res.body.message).to.match(/staged/);
  });

  it('starts the ZIP over when a job dies half-way, and the result is whole', async () => {
    const ulids = await codeUlids(a, 5);
    const res = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: ulids });
    const row = await svc.app.db('qr_code_exports').where({ ulid: res.body.data.ulid }).first();
    // What a worker killed mid-run leaves: processing, some progress, chunks of a partial ZIP.
    await svc.app.db('qr_code_exports').where({ id: row.id }).update({ status: 'processing', done: 3, attempts: 1 });
    await svc.app.db('qr_code_export_chunks').insert([
      { export_id: row.id, seq: 0, data: Buffer.from('partial') },
      { export_id: row.id, seq: 7, data: Buffer.from('stale') },
    ]);
    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/exports/${res.body.data.ulid}`, a.token)).body.data;
    expect(done).to.deep.include({ status: 'completed', done: 5 });
    const files = await unzip((await download(res.body.data.ulid, a.token)).body);
    expect(files.size).to.equal(6);
  });

  it('leaves out codes deleted after the request', async () => {
    const ulids = await codeUlids(a, 3);
    const extra = await svc.post('/v1/qr-codes', a.token, {
      slug: 'short-lived',
      destination: 'https://example.com/gone',
      domain_ulid: domain,
    });
    const res = await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [...ulids, extra.body.data.ulid] });
    expect(res.body.data.total).to.equal(4);
    await svc.delete(`/v1/qr-codes/${extra.body.data.ulid}`, a.token);
    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/exports/${res.body.data.ulid}`, a.token)).body.data;
    expect(done).to.deep.include({ status: 'completed', total: 4, done: 3 });
    const files = await unzip((await download(res.body.data.ulid, a.token)).body);
    expect([...files.keys()]).to.not.include('short-lived.svg');
    expect(files.size).to.equal(4);
  });

  it('removes the ZIP after QR_EXPORT_TTL_HOURS: expired (by the hourly prune or at the next read), download 409', async () => {
    const [own] = await codeUlids(a, 1);
    const ulids: string[] = [];
    for (let i = 0; i < 2; i++)
      ulids.push((await svc.post('/v1/qr-codes/exports', a.token, { code_ulids: [own] })).body.data.ulid);
    await runJobs();
    const ids = (await svc.app.db('qr_code_exports').whereIn('ulid', ulids).orderBy('id').pluck('id')) as number[];
    const read = (await svc.get(`/v1/qr-codes/exports/${ulids[0]}`, a.token)).body.data;
    expect(Date.parse(read.expires_at) - Date.parse(read.completed_at)).to.equal(72 * 3600_000);
    svc.clock.advance(72 * 3600_000 + 1000);
    try {
      // The first by a read: the download says so, and the ZIP is gone.
      const late = await download(ulids[0], a.token);
      expect(late.status).to.equal(409);
      expect(JSON.parse(late.body.toString()).message).to.match(/expired/);
      expect((await svc.get(`/v1/qr-codes/exports/${ulids[0]}`, a.token)).body.data).to.deep.include({
        status: 'expired',
        download_url: null,
      });
      // The second by the prune job, unread.
      expect(await pruneExports(svc.app)).to.be.at.least(1);
      expect((await svc.app.db('qr_code_exports').where({ id: ids[1] }).first()).status).to.equal('expired');
      expect(await svc.app.db('qr_code_export_chunks').whereIn('export_id', ids)).to.be.empty;
      expect(await svc.app.db('qr_code_export_items').whereIn('export_id', ids)).to.be.empty;
    } finally {
      svc.clock.reset();
    }
  });
});
