import { expect } from 'chai';
import { ulid } from 'ulid';
import { executeBatch } from '../../server/bulk-imports/job.js';
import { DOMAIN_ULID_REQUIRED } from '../../server/qr-codes/schema.js';
import { runJobs as runJobsOnce } from '../helpers/jobs.js';
import { startTestService, type TestOrg, type TestService } from '../helpers/harness.js';
import { LANDING_CASES } from '../helpers/landing-cases.js';

describe('Bulk import: /v1/qr-codes/bulk', () => {
  let svc: TestService;
  let fallbackUlid: string;
  let a: TestOrg;
  let b: TestOrg;

  const runJobs = () => runJobsOnce(svc.app);
  const row = (slug: string, extra: Record<string, unknown> = {}) => ({
    slug,
    destination: `https://example.com/${encodeURIComponent(slug)}`,
    ...extra,
  });
  const codeCount = async (orgId: number) =>
    Number(
      (
        await svc.app.db('qr_codes').where({ org_id: orgId }).whereNull('deleted_at').count<{ c: string }[]>('* as c')
      )[0].c,
    );

  async function stage(
    org: TestOrg,
    rows: unknown[],
    defaults: Record<string, unknown> = { domain_ulid: fallbackUlid },
  ) {
    const res = await svc.post('/v1/qr-codes/bulk', org.token, { rows, defaults });
    expect(res.status, res.text).to.equal(201);
    return { imp: res.body.data, token: res.body.meta.confirm_token as string };
  }

  before(async () => {
    svc = await startTestService({ config: { bulkImportMaxRows: 50 } });
    fallbackUlid = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
    a = await svc.createOrg({ plan: 'business_monthly', slug: 'bulkco' });
    b = await svc.createOrg({ plan: 'business_monthly', slug: 'bulkother' });
  });
  after(() => svc.close());

  it('stages rows, validating each one, and reports the preview', async () => {
    await svc.post('/v1/qr-codes', a.token, {
      slug: 'existing',
      destination: 'https://x.com',
      domain_ulid: fallbackUlid,
    });
    const foreignDomain = ulid();
    await svc.app.db('domains').insert({ ulid: foreignDomain, org_id: b.org.id, host: 'bulk-b.test', type: 'custom' });
    const res = await svc.post('/v1/qr-codes/bulk', a.token, {
      rows: [
        row('ok-1'),
        row('bad slug'),
        row('OK-1'),
        row('Existing'),
        row('foreign', { domain_ulid: foreignDomain }),
        { slug: 'bad-url', destination: 'notaurl' },
        { slug: 'no-dest' },
        row('ok-2', { name: 'Two', status: 'paused' }),
      ],
      defaults: { domain_ulid: fallbackUlid },
    });
    expect(res.status).to.equal(201);
    const d = res.body.data;
    expect(res.body.meta.confirm_token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(d).to.deep.include({
      type: 'qr_codes',
      status: 'staged',
      source: 'api',
      awaiting_confirmation: true,
      total_rows: 8,
      processed_rows: 0,
      success_count: 0,
      failed_count: 0,
      skipped_count: 0,
      valid_row_count: 2,
      progress_percent: 0,
      error_message: null,
      has_error_report: true,
      confirmed_at: null,
      completed_at: null,
    });
    expect(d.preview_errors).to.deep.equal([
      { row: 1, field: 'slug', message: 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.' },
      { row: 2, field: 'slug', message: 'Repeats the slug of entry 0.' },
      { row: 3, field: 'slug', message: 'The slug has already been taken.' },
      { row: 4, field: 'domain_ulid', message: 'No such domain in this organization.' },
      { row: 5, field: 'destination', message: 'Must be a valid http or https URL, e.g. https://example.com/page.' },
      { row: 6, field: 'destination', message: 'This field is required.' },
    ]);
    expect(await codeCount(a.org.id)).to.equal(1);
    const read = await svc.get(`/v1/qr-codes/bulk/${d.ulid}`, a.token);
    expect(read.status).to.equal(200);
    expect(read.body.data).to.deep.equal(d);
    const errors = await svc.get(`/v1/qr-codes/bulk/${d.ulid}/errors`, a.token);
    expect(errors.body.data).to.deep.equal(d.preview_errors);
  });

  it('runs the whole flow: confirm queues a job, the worker creates the valid rows and reports the rest', async () => {
    const brandUlid = ulid();
    await svc.app.db('brands').insert({ ulid: brandUlid, org_id: a.org.id, name: 'Bulk brand', slug: 'bulk-brand' });
    const { imp, token } = await stage(
      a,
      [row('flow-1'), row('flow-2', { brand_ulid: null }), row('flow 3'), row('flow-4', { name: 'Four' })],
      {
        domain_ulid: fallbackUlid,
        brand_ulid: brandUlid,
      },
    );
    const wrong = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: 'x'.repeat(43) });
    expect(wrong.status).to.equal(422);
    expect(wrong.body.errors).to.have.property('confirm_token');

    const confirm = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
    expect(confirm.status).to.equal(202);
    expect(confirm.body.data).to.deep.include({ status: 'queued', awaiting_confirmation: false, processed_rows: 0 });
    expect(confirm.body.data.confirmed_at).to.be.a('string');
    const jobs = await svc.app
      .db('graphile_worker.jobs')
      .where({ key: `bulk-import:${imp.ulid}` })
      .select('task_identifier');
    expect(jobs.map((j) => j.task_identifier)).to.deep.equal(['bulk-import-execute']);

    const again = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
    expect(again.status).to.equal(409);
    expect(again.body.code).to.equal('conflict');

    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, a.token)).body.data;
    expect(done).to.deep.include({
      status: 'completed_with_errors',
      total_rows: 4,
      processed_rows: 4,
      success_count: 3,
      failed_count: 0,
      skipped_count: 1,
      valid_row_count: 3,
      progress_percent: 100,
      has_error_report: true,
      error_message: null,
    });
    expect(done.completed_at).to.be.a('string');
    const codes = await svc.app
      .db('qr_codes as c')
      .leftJoin('brands as b', 'b.id', 'c.brand_id')
      .where('c.org_id', a.org.id)
      .whereIn('c.slug', ['bulkco/flow-1', 'bulkco/flow-2', 'bulkco/flow-4'])
      .orderBy('c.slug')
      .select('c.slug', 'c.name', 'b.ulid as brand', 'c.destination');
    expect(codes).to.deep.equal([
      { slug: 'bulkco/flow-1', name: null, brand: brandUlid, destination: 'https://example.com/flow-1' },
      { slug: 'bulkco/flow-2', name: null, brand: null, destination: 'https://example.com/flow-2' },
      { slug: 'bulkco/flow-4', name: 'Four', brand: brandUlid, destination: 'https://example.com/flow-4' },
    ]);
    const errors = await svc.get(`/v1/qr-codes/bulk/${imp.ulid}/errors`, a.token);
    expect(errors.body.data).to.deep.equal([
      { row: 2, field: 'slug', message: 'Must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -.' },
    ]);
  });

  it('imports a row of every code type, with row errors for destinations that do not fit their type', async () => {
    const typed: Record<string, unknown>[] = [
      row('t-url', { type: 'redirect' }),
      ...Object.entries(LANDING_CASES).map(([type, destination]) => ({ slug: `t-${type}`, type, destination })),
      { slug: 't-wifi', type: 'wifi', destination: { ssid: 'Cafe', password: 'secret12' } },
      { slug: 't-text', type: 'text', destination: { text: 'Hello' } },
      { slug: 't-email', type: 'email', destination: { to: 'a@example.com', subject: 'Hi' } },
      { slug: 't-sms', type: 'sms', destination: { number: '+4930123', body: 'Hi' } },
      { slug: 't-phone', type: 'phone', destination: { number: '+4930123' } },
      { slug: 't-geo', type: 'geo', destination: { latitude: 1.5, longitude: 2.5 } },
      { slug: 't-bad-wifi', type: 'wifi', destination: { ssid: 'No password' } },
      { slug: 't-bad-type', type: 'fax', destination: 'https://example.com/' },
      { slug: 't-bad-geo', type: 'geo', destination: 'https://example.com/' },
    ];
    const { imp, token } = await stage(a, typed);
    expect(imp.valid_row_count).to.equal(typed.length - 3);
    const confirm = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
    expect(confirm.status).to.equal(202);
    await runJobs();
    const stored = await svc.app
      .db('qr_codes')
      .where('org_id', a.org.id)
      .where('slug', 'like', 'bulkco/t-%')
      .orderBy('slug')
      .select('slug', 'type');
    expect(Object.fromEntries(stored.map((r) => [r.slug, r.type]))).to.deep.equal({
      'bulkco/t-app': 'app',
      'bulkco/t-email': 'email',
      'bulkco/t-event': 'event',
      'bulkco/t-geo': 'geo',
      'bulkco/t-links': 'links',
      'bulkco/t-phone': 'phone',
      'bulkco/t-sms': 'sms',
      'bulkco/t-text': 'text',
      'bulkco/t-url': 'url',
      'bulkco/t-vcard': 'vcard',
      'bulkco/t-wifi': 'wifi',
    });
    const errors = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}/errors`, a.token)).body.data as {
      row: number;
      field: string;
    }[];
    expect(errors.map((e) => [e.row, e.field])).to.deep.include.members([
      [typed.length - 3, 'destination.password'],
      [typed.length - 2, 'type'],
      [typed.length - 1, 'destination'],
    ]);
  });

  it('completes without errors when every row is valid', async () => {
    const { imp, token } = await stage(a, [row('clean-1'), row('clean-2')]);
    expect(imp.has_error_report).to.equal(false);
    await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, a.token)).body.data;
    expect(done).to.deep.include({
      status: 'completed',
      success_count: 2,
      failed_count: 0,
      skipped_count: 0,
      has_error_report: false,
    });
    expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}/errors`, a.token)).body.data).to.deep.equal([]);
  });

  it('fails a row whose slug was taken between staging and execution, and fails an import with no row created', async () => {
    const { imp, token } = await stage(a, [row('race-1'), row('race-2')]);
    await svc.post('/v1/qr-codes', a.token, {
      slug: 'RACE-2',
      destination: 'https://x.com',
      domain_ulid: fallbackUlid,
    });
    await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
    const none = await stage(a, [row('bad slug!')]);
    await svc.post(`/v1/qr-codes/bulk/${none.imp.ulid}/confirm`, a.token, { confirm_token: none.token });
    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, a.token)).body.data;
    expect(done).to.deep.include({
      status: 'completed_with_errors',
      success_count: 1,
      failed_count: 1,
      skipped_count: 0,
      processed_rows: 2,
    });
    expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}/errors`, a.token)).body.data).to.deep.equal([
      { row: 1, field: 'slug', message: 'The slug has already been taken.' },
    ]);
    const failed = (await svc.get(`/v1/qr-codes/bulk/${none.imp.ulid}`, a.token)).body.data;
    expect(failed).to.deep.include({ status: 'failed', success_count: 0, skipped_count: 1, valid_row_count: 0 });
    expect(failed.error_message).to.match(/No row could be created/);
  });

  it('never creates a code twice when a job is retried after a partial run', async () => {
    const org = await svc.createOrg({ plan: 'business_monthly' });
    const rows = Array.from({ length: 30 }, (_, i) => row(`retry-${i}`));
    const { imp, token } = await stage(org, rows);
    await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, org.token, { confirm_token: token });
    const { id } = await svc.app.db('bulk_imports').where({ ulid: imp.ulid }).first('id');
    // A first attempt that got through one batch of 10 and then died.
    expect(await executeBatch(svc.app, id, 10)).to.equal(10);
    const partial = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, org.token)).body.data;
    expect(partial).to.deep.include({
      status: 'processing',
      processed_rows: 10,
      success_count: 10,
      progress_percent: 33,
    });
    expect(await codeCount(org.org.id)).to.equal(10);
    // The retry, and then a duplicate delivery of the same job.
    await runJobs();
    await svc.app.db.raw(
      `select graphile_worker.add_job('bulk-import-execute', json_build_object('import_id', ?::int))`,
      [id],
    );
    await runJobs();
    expect(await codeCount(org.org.id)).to.equal(30);
    const done = (await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, org.token)).body.data;
    expect(done).to.deep.include({ status: 'completed', processed_rows: 30, success_count: 30, failed_count: 0 });
    const linked = await svc.app
      .db('bulk_import_rows')
      .where({ import_id: id, status: 'created' })
      .countDistinct<{ c: string }[]>('code_id as c');
    expect(Number(linked[0].c)).to.equal(30);
  });

  it('expires an import not confirmed within 24 hours; confirming it is 422', async () => {
    const { imp, token } = await stage(a, [row('late-1')]);
    svc.clock.advance(24 * 3600 * 1000 + 1000);
    try {
      expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, a.token)).body.data).to.deep.include({
        status: 'expired',
        awaiting_confirmation: false,
      });
      const res = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
      expect(res.status).to.equal(422);
      expect(res.body.errors.confirm_token[0]).to.match(/expired/);
    } finally {
      svc.clock.reset();
    }
    const other = await stage(a, [row('late-2')]);
    svc.clock.advance(24 * 3600 * 1000 + 1000);
    try {
      // Straight to confirm, without a read first.
      const res = await svc.post(`/v1/qr-codes/bulk/${other.imp.ulid}/confirm`, a.token, {
        confirm_token: other.token,
      });
      expect(res.status).to.equal(422);
      expect((await svc.app.db('bulk_imports').where({ ulid: other.imp.ulid }).first('status')).status).to.equal(
        'expired',
      );
    } finally {
      svc.clock.reset();
    }
  });

  describe('request validation', () => {
    it('refuses more rows than BULK_IMPORT_MAX_ROWS with 422', async () => {
      const res = await svc.post('/v1/qr-codes/bulk', a.token, {
        rows: Array.from({ length: 51 }, (_, i) => row(`m${i}`)),
        defaults: { domain_ulid: fallbackUlid },
      });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.deep.equal({ rows: ['At most 50 rows per import; got 51.'] });
      expect(await svc.app.db('bulk_imports').where({ org_id: a.org.id, total_rows: 51 }).first()).to.equal(undefined);
    });

    const bad: [string, unknown, string][] = [
      ['no rows', { rows: [] }, 'rows'],
      ['rows missing', {}, 'rows'],
      ['an unknown row key', { rows: [{ slug: 'x', destination: 'https://x.com', owner: 1 }] }, 'rows.0.owner'],
      ['a row slug of the wrong type', { rows: [{ slug: 5, destination: 'https://x.com' }] }, 'rows.0.slug'],
      ['an unknown defaults key', { rows: [row('x')], defaults: { style_ulid: ulid() } }, 'defaults.style_ulid'],
      ['a malformed default domain', { rows: [row('x')], defaults: { domain_ulid: 'x' } }, 'defaults.domain_ulid'],
      ['an unknown field', { rows: [row('x')], confirm: true }, 'confirm'],
      ['a NUL character in a row', { rows: [row('x'), row('y', { name: 'a\u0000' })] }, 'rows.1.name'],
    ];
    for (const [what, body, field] of bad) {
      it(`answers 422 on ${field} for ${what}`, async () => {
        const res = await svc.post('/v1/qr-codes/bulk', a.token, body);
        expect(res.status).to.equal(422);
        expect(res.body.errors).to.have.property(field);
      });
    }

    it('answers 422 for a default domain or brand of another organization', async () => {
      const dom = ulid();
      await svc.app.db('domains').insert({ ulid: dom, org_id: b.org.id, host: 'bulk-b2.test', type: 'custom' });
      const br = ulid();
      await svc.app.db('brands').insert({ ulid: br, org_id: b.org.id, name: 'B', slug: 'b' });
      const res = await svc.post('/v1/qr-codes/bulk', a.token, {
        rows: [row('x')],
        defaults: { domain_ulid: dom, brand_ulid: br },
      });
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.deep.equal({
        'defaults.domain_ulid': ['No such domain in this organization.'],
        'defaults.brand_ulid': ['No such brand in this organization.'],
      });
    });

    it('reports a row without any domain as a preview error', async () => {
      const { imp } = await stage(a, [row('nodomain')], {});
      expect(imp.preview_errors).to.deep.equal([{ row: 0, field: 'domain_ulid', message: DOMAIN_ULID_REQUIRED }]);
    });

    it('answers 422 for a confirm without a token', async () => {
      const { imp } = await stage(a, [row('notoken')]);
      const res = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, {});
      expect(res.status).to.equal(422);
      expect(res.body.errors).to.deep.equal({ confirm_token: ['This field is required.'] });
    });
  });

  describe('isolation and abilities', () => {
    it('answers 404 for an import of another organization on read, confirm and errors', async () => {
      const { imp, token } = await stage(b, [row('b-1')]);
      expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, a.token)).status).to.equal(404);
      expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}/errors`, a.token)).status).to.equal(404);
      const c = await svc.post(`/v1/qr-codes/bulk/${imp.ulid}/confirm`, a.token, { confirm_token: token });
      expect(c.status).to.equal(404);
      expect((await svc.get(`/v1/qr-codes/bulk/${imp.ulid}`, b.token)).body.data.status).to.equal('staged');
      expect((await svc.get(`/v1/qr-codes/bulk/${ulid()}`, a.token)).status).to.equal(404);
    });

    const needs: [string, string, string][] = [
      ['POST', '/v1/qr-codes/bulk', 'codes.create'],
      ['GET', '/v1/qr-codes/bulk/{id}', 'codes.view'],
      ['POST', '/v1/qr-codes/bulk/{id}/confirm', 'codes.create'],
      ['GET', '/v1/qr-codes/bulk/{id}/errors', 'codes.view'],
    ];
    for (const [method, path, ability] of needs) {
      it(`${method} ${path} needs ${ability}`, async () => {
        const { imp, token: confirmToken } = await stage(a, [row(`ab-${Math.random().toString(36).slice(2, 8)}`)]);
        const token = await svc.createToken(a.org, {
          abilities: ['codes.view', 'codes.create', 'codes.update', 'codes.delete'].filter((x) => x !== ability),
        });
        const body =
          method === 'POST'
            ? path.endsWith('confirm')
              ? { confirm_token: confirmToken }
              : { rows: [row('zz')], defaults: { domain_ulid: fallbackUlid } }
            : undefined;
        const res = await svc.request(method, path.replace('{id}', imp.ulid), { token, body });
        expect(res.status).to.equal(403);
        expect(res.body.required_ability).to.equal(ability);
        const allowed = await svc.createToken(a.org, { abilities: [ability] });
        const ok = await svc.request(method, path.replace('{id}', imp.ulid), { token: allowed, body });
        expect(ok.status).to.be.oneOf([200, 201, 202]);
      });
    }
  });
});
