import { expect } from 'chai';
import { runJobs as runJobsOnce } from '../helpers/jobs.js';
import { startTestService, type TestService } from '../helpers/harness.js';

// The default maximum (10,000 rows) end to end, and the job's last failed attempt.
describe('Bulk import at full size and on failure', () => {
  let svc: TestService;
  let domain: string;
  const runJobs = () => runJobsOnce(svc.app);

  before(async () => {
    svc = await startTestService();
    domain = (await svc.app.db('domains').where({ type: 'fallback' }).first('ulid')).ulid;
  });
  after(() => svc.close());

  it('stages 10,000 rows and creates them all in batches', async function () {
    this.timeout(120_000);
    const org = await svc.createOrg({ plan: 'business_monthly' });
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      slug: `big-${i}`,
      destination: `https://example.com/${i}`,
    }));
    const staged = await svc.post('/v1/qr-codes/bulk', org.token, { rows, defaults: { domain_ulid: domain } });
    expect(staged.status).to.equal(201);
    expect(staged.body.data).to.deep.include({ total_rows: 10_000, valid_row_count: 10_000, preview_errors: [] });
    const over = await svc.post('/v1/qr-codes/bulk', org.token, {
      rows: [...rows, { slug: 'one-more', destination: 'https://x.com' }],
    });
    expect(over.status).to.equal(422);
    expect(over.body.errors).to.deep.equal({ rows: ['At most 10000 rows per import; got 10001.'] });
    const confirm = await svc.post(`/v1/qr-codes/bulk/${staged.body.data.ulid}/confirm`, org.token, {
      confirm_token: staged.body.meta.confirm_token,
    });
    expect(confirm.status).to.equal(202);
    await runJobs();
    const done = (await svc.get(`/v1/qr-codes/bulk/${staged.body.data.ulid}`, org.token)).body.data;
    expect(done).to.deep.include({
      status: 'completed',
      processed_rows: 10_000,
      success_count: 10_000,
      progress_percent: 100,
    });
    const count = await svc.app.db('qr_codes').where({ org_id: org.org.id }).count<{ c: string }[]>('* as c');
    expect(Number(count[0].c)).to.equal(10_000);
  });

  it('marks the import failed with the error after the job’s last attempt', async () => {
    const org = await svc.createOrg({ plan: 'business_monthly' });
    const staged = await svc.post('/v1/qr-codes/bulk', org.token, {
      rows: [{ slug: 'doomed', destination: 'https://x.com' }],
      defaults: { domain_ulid: domain },
    });
    const ulid = staged.body.data.ulid;
    await svc.post(`/v1/qr-codes/bulk/${ulid}/confirm`, org.token, { confirm_token: staged.body.meta.confirm_token });
    await svc.app.db.raw(`update graphile_worker._private_jobs set max_attempts = 1 where key = ?`, [
      `bulk-import:${ulid}`,
    ]);
    // The store breaks under the job: its table is gone for the duration of the run.
    await svc.app.db.raw('alter table bulk_import_rows rename to bulk_import_rows_away');
    try {
      await runJobs();
    } finally {
      await svc.app.db.raw('alter table bulk_import_rows_away rename to bulk_import_rows');
    }
    const res = (await svc.get(`/v1/qr-codes/bulk/${ulid}`, org.token)).body.data;
    expect(res).to.deep.include({ status: 'failed', success_count: 0 });
    expect(res.error_message).to.match(/bulk_import_rows/);
    expect(res.completed_at).to.be.a('string');
  });
});
