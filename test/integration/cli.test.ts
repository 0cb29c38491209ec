import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ulid } from 'ulid';
import { quarantineBatch, spillDirOf } from '../../server/analytics/scan-spill.js';
import { parseCommand, runCommand, type CliIo } from '../../server/cli/commands.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { runQrctl } from '../helpers/web-client.js';

const run = promisify(execFile);

describe('qrctl', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService();
  });
  after(() => svc.close());

  const cli = (...argv: string[]) => runQrctl(svc.app, argv);

  it('creates an organization with an owner, a wallet and a * token whose secret works', async () => {
    const r = await cli(
      'org',
      'create',
      '--name',
      'Acme',
      '--slug',
      'acme',
      '--plan',
      'business_monthly',
      '--currency',
      'eur',
      '--owner-email',
      'boss@acme.test',
      '--json',
    );
    expect(r.code).to.equal(0);
    const body = JSON.parse(r.out);
    expect(body.organization).to.deep.include({ name: 'Acme', slug: 'acme', currency: 'EUR' });
    expect(body.plan).to.equal('business_monthly');
    expect(body.token).to.match(/^\d+\|[A-Za-z0-9]{48}$/);
    const status = await svc.get('/v1/status', body.token);
    expect(status.status).to.equal(200);
    expect(status.body.organization.slug).to.equal('acme');
    expect((await svc.get('/v1/wallet', body.token)).body.data.balance).to.equal('0.00');
  });

  it('changes the plan, to none as well (then 403 api_access_disabled)', async () => {
    const created = JSON.parse(
      (
        await cli(
          'org',
          'create',
          '--name',
          'P',
          '--slug',
          'plan-co',
          '--plan',
          'starter_monthly',
          '--currency',
          'USD',
          '--owner-email',
          'p@x.test',
          '--json',
        )
      ).out,
    );
    expect((await cli('org', 'set-plan', '--org', 'plan-co', '--plan', 'enterprise_annual', '--json')).code).to.equal(
      0,
    );
    expect((await svc.get('/v1/status', created.token)).body.plan.code).to.equal('enterprise_annual');
    expect((await cli('org', 'set-plan', '--org', created.organization.ulid, '--plan', 'none')).code).to.equal(0);
    expect((await svc.get('/v1/status', created.token)).status).to.equal(403);
  });

  it('tops up a wallet in the organization’s currency and records a credit', async () => {
    const created = JSON.parse(
      (
        await cli(
          'org',
          'create',
          '--name',
          'W',
          '--slug',
          'wallet-co',
          '--plan',
          'starter_monthly',
          '--currency',
          'JPY',
          '--owner-email',
          'w@x.test',
          '--json',
        )
      ).out,
    );
    const r = await cli('wallet', 'top-up', '--org', 'wallet-co', '--amount', '500', '--json');
    expect(r.code).to.equal(0);
    expect(JSON.parse(r.out)).to.deep.include({ credited: '500', balance: '500', currency: 'JPY' });
    const wallet = await svc.get('/v1/wallet', created.token);
    expect(wallet.body.data.transactions.data[0]).to.deep.include({
      type: 'credit',
      amount: '500',
      reference_type: 'top_up',
    });
    const bad = await cli('wallet', 'top-up', '--org', 'wallet-co', '--amount', '1.5');
    expect(bad.code).to.equal(2);
    expect(bad.err).to.include('--amount must be a positive decimal');
  });

  it('creates a token for a member with chosen abilities and expiry', async () => {
    await cli(
      'org',
      'create',
      '--name',
      'T',
      '--slug',
      'token-co',
      '--plan',
      'business_monthly',
      '--currency',
      'EUR',
      '--owner-email',
      't@x.test',
    );
    await cli('member', 'add', '--org', 'token-co', '--email', 'ed@x.test', '--role', 'editor');
    const r = await cli(
      'token',
      'create',
      '--org',
      'token-co',
      '--email',
      'ed@x.test',
      '--name',
      'ci',
      '--abilities',
      'codes.view,codes.create',
      '--expires-at',
      '2099-01-01T00:00:00Z',
      '--json',
    );
    expect(r.code).to.equal(0);
    const body = JSON.parse(r.out);
    expect(body.data).to.deep.include({
      name: 'ci',
      abilities: ['codes.view', 'codes.create'],
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect((await svc.get('/v1/status', body.token)).body.token.abilities).to.deep.equal([
      'codes.view',
      'codes.create',
    ]);
    const stranger = await cli('token', 'create', '--org', 'token-co', '--email', 'nobody@x.test', '--name', 'x');
    expect(stranger.code).to.equal(2);
    expect(stranger.err).to.include('is not a member');
  });

  it('lists, shows and re-queues a quarantined scan batch, which /readyz and /metrics report meanwhile', async () => {
    const spillDir = spillDirOf(svc.app.config.dataDir);
    const token = ulid();
    const tsv = 'a\tnot-a-number\n';
    await quarantineBatch(spillDir, 'scan_events', { token, tsv, rows: 1 }, '/x/scan_events-1-X.ndjson', 'Code: 27.');
    const listed = await cli('quarantine', 'list', '--json');
    expect(listed.code).to.equal(0);
    expect(JSON.parse(listed.out).batches).to.deep.equal([
      {
        token,
        table: 'scan_events',
        rows: 1,
        from: '/x/scan_events-1-X.ndjson',
        error: 'Code: 27.',
        at: JSON.parse(listed.out).batches[0].at,
        file: path.join(spillDir, 'quarantine', `scan_events-${token}.ndjson`),
      },
    ]);
    expect(JSON.parse((await cli('quarantine', 'show', token, '--json')).out)).to.include({ token, tsv });
    const ready = (await (await fetch(`${svc.url}/readyz`)).json()) as { status: string; scan_backlog: object };
    expect(ready.status).to.equal('ok'); // a backlog is reported, and the service stays ready
    expect(ready.scan_backlog).to.deep.equal({
      status: 'pending',
      spill_files: 0,
      spill_bytes: 0,
      quarantined_batches: 1,
    });
    expect(await (await fetch(`${svc.url}/metrics`)).text()).to.match(/^scan_quarantined_batches 1$/m);

    const requeued = await cli('quarantine', 'requeue', token, '--json');
    expect(requeued.code).to.equal(0);
    const { requeued_as: file } = JSON.parse(requeued.out);
    expect(path.basename(file)).to.match(/^scan_events-requeued-[0-9A-Z]{26}\.ndjson$/);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).to.deep.equal({ token, tsv, rows: 1 });
    expect(JSON.parse((await cli('quarantine', 'list', '--json')).out).batches).to.deep.equal([]);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).to.match(/^scan_quarantined_batches 0$/m);
    expect(metrics).to.match(/^scan_spill_backlog_files 1$/m);
    await fs.rm(file);

    for (const missing of [ulid(), '../../etc/passwd']) {
      const r = await cli('quarantine', 'requeue', missing);
      expect([r.code, r.err]).to.deep.equal([2, `qrctl: no quarantined batch ${missing}`]);
    }
  });

  it('rejects bad arguments with a clear message and exit code 2', async () => {
    expect((await cli('org', 'create', '--name', 'X')).err).to.include(
      'missing --slug, --plan, --currency, --owner-email',
    );
    expect((await cli('org', 'fly')).err).to.include('unknown command');
    expect((await cli('org', 'create', '--bogus', '1')).err).to.include("Unknown option '--bogus'");
    const bad = await cli(
      'org',
      'create',
      '--name',
      'X',
      '--slug',
      'Bad Slug',
      '--plan',
      'gold',
      '--currency',
      'XXY',
      '--owner-email',
      'nope',
      '--json',
    );
    expect(bad.code).to.equal(2);
    const errors = JSON.parse(bad.out).error.errors;
    expect(Object.keys(errors).sort()).to.deep.equal(['currency', 'owner_email', 'slug']);
    const plan = await cli(
      'org',
      'create',
      '--name',
      'X',
      '--slug',
      'good',
      '--plan',
      'gold',
      '--currency',
      'EUR',
      '--owner-email',
      'a@b.test',
    );
    expect(plan.code).to.equal(2);
    expect(plan.err).to.equal('qrctl: plan: Unknown plan "gold".');
    const dup = await cli(
      'org',
      'create',
      '--name',
      'X',
      '--slug',
      'acme',
      '--plan',
      'none',
      '--currency',
      'EUR',
      '--owner-email',
      'a@b.test',
    );
    expect(dup.err).to.equal('qrctl: slug: The slug "acme" is already taken.');
  });

  it('seeds a demo organization with brands, codes and the asked number of scans, reporting progress', async () => {
    const progress: string[] = [];
    const io: CliIo = {
      out: (l) => progress.push(`out:${l}`),
      err: () => undefined,
      progress: (l) => progress.push(l),
    };
    const code = await runCommand(
      svc.app,
      parseCommand(['seed-demo', '--scans', '5000', '--slug', 'demo-cli', '--json']),
      io,
    );
    expect(code).to.equal(0);
    const body = JSON.parse(progress.find((l) => l.startsWith('out:'))!.slice(4));
    expect(body.scans).to.equal(5000);
    expect(body.codes).to.be.greaterThan(0);
    expect(progress.some((l) => l.includes('100% 5,000 / 5,000 scans'))).to.equal(true);
    const org = await svc.app.db('organizations').where({ slug: 'demo-cli' }).first('id');
    const rows = await (
      await svc.app.ch.client.query({
        query: `SELECT count() AS n FROM ${svc.app.ch.database}.scan_events WHERE org_id = {org:UInt64}`,
        query_params: { org: org.id },
        format: 'JSONEachRow',
      })
    ).json<{ n: string }>();
    expect(Number(rows[0].n)).to.equal(5000);
    const analytics = await svc.get('/v1/analytics?range=90', body.token);
    expect(analytics.status).to.equal(200);
    expect(analytics.body.data.totals.scans).to.be.greaterThan(0);
    const bad = await cli('seed-demo', '--scans', '-5');
    expect(bad.code).to.equal(2);
  });

  it('runs as npx qrctl against DATABASE_URL, printing one JSON object', async function () {
    this.timeout(60_000);
    const bin = path.resolve('bin/qrctl.js');
    const env = { ...process.env, DATABASE_URL: svc.app.databaseUrl, DATA_DIR: svc.app.config.dataDir };
    const { stdout } = await run(
      bin,
      [
        'org',
        'create',
        '--name',
        'Sub',
        '--slug',
        'subprocess',
        '--plan',
        'starter_annual',
        '--currency',
        'GBP',
        '--owner-email',
        's@x.test',
        '--json',
      ],
      { env },
    );
    const body = JSON.parse(stdout);
    expect(body.organization.slug).to.equal('subprocess');
    expect((await svc.get('/v1/status', body.token)).body.plan.code).to.equal('starter_annual');
    let failure: { code?: number; stderr?: string; stdout?: string } = {};
    try {
      await run(bin, ['wallet', 'top-up', '--org', 'subprocess'], { env });
    } catch (e) {
      failure = e as typeof failure;
    }
    expect(failure.code).to.equal(2);
    expect(failure.stderr).to.include('missing --amount');
    expect(failure.stderr).not.to.include('    at ');
  });
});
