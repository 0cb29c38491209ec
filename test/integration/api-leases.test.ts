// Leases of API calls (sql/0096_api_leases.sql, docs/api.md, Leases): a process admits calls from
// what it took in one round trip, and gives the unspent ones back; every answered call is billed
// once, the window and the wallet are never exceeded, and a process killed with SIGKILL under load
// loses nothing: its lease expires and another process settles it from the journal.
import fs from 'node:fs';
import { expect } from 'chai';
import { leaseDirOf } from '../../server/metering/admission.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { waitFor } from '../helpers/poll.js';
import { embeddedServiceEnv, startService } from '../helpers/service-process.js';

describe('API call leases', function () {
  this.timeout(300_000);
  let svc: TestService;
  before(async () => {
    // 1,000 calls a minute for every organization (the platform's ceiling, above every plan).
    svc = await startTestService({ config: { apiLeaseCalls: 64, apiLeaseSeconds: 2, platformRateLimitPerMin: 1_000 } });
  });
  after(() => svc.close());
  afterEach(() => svc.clock.reset());

  /** The organization's billable calls, balance and ledger, once every lease is settled. */
  async function books(orgId: number) {
    await svc.app.admitter.settleAll();
    const usage = await svc.app.db('api_usage_months').where({ org_id: orgId });
    const wallet = await svc.app.db('wallets').where({ org_id: orgId }).first();
    const debits = await svc.app.db('wallet_transactions').where({ org_id: orgId, type: 'debit' });
    return {
      calls: usage.reduce((s, r) => s + Number(r.calls), 0),
      balance: Number(wallet?.balance_minor ?? 0),
      debited: -debits.reduce((s, r) => s + Number(r.amount_minor), 0),
      open: Number((await svc.app.db('api_leases').where({ org_id: orgId }).whereNull('settled_at').count())[0].count),
      leases: Number((await svc.app.db('api_leases').where({ org_id: orgId }).count())[0].count),
    };
  }

  async function statuses(token: string, n: number, concurrency: number, p = '/v1/organization') {
    const seen: number[] = [];
    let left = n;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) seen.push((await svc.get(p, token)).status);
      }),
    );
    return { ok: seen.filter((s) => s === 200).length, refused: seen.filter((s) => s !== 200) };
  }

  it('admits calls from leases and bills each answered call once, the wallet’s included', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 10_000 });
    const before = await svc.app.metrics.admissionBatch.get();
    const r = await statuses(token, 600, 8);
    expect(r.refused).to.deep.equal([]);
    expect(r.ok).to.equal(600);
    const after = await svc.app.metrics.admissionBatch.get();
    const roundTrips = (v: typeof before) => v.values.find((x) => x.metricName?.endsWith('_count'))?.value ?? 0;
    // Leases grow while they run out: far fewer round trips than calls.
    expect(roundTrips(after) - roundTrips(before)).to.be.below(100);
    const b = await books(org.id);
    expect(b.leases).to.be.above(0);
    expect(b.open).to.equal(0);
    expect(b.calls).to.equal(600);
    expect(b.debited).to.equal(600);
    expect(b.balance).to.equal(10_000 - 600);
    // Their journals are removed once settled.
    expect(fs.readdirSync(leaseDirOf(svc.app.config))).to.deep.equal([]);
  });

  /** This process's lease with at least `room` calls left for the organization's billable calls, taken by calling. */
  async function heldLease(orgId: number, token: string, room: number) {
    type Held = { id: string; granted: number; spent: number; fd: number; file: string };
    const leases = (svc.app.admitter as unknown as { leases: Map<string, Held> }).leases;
    for (let i = 0; i < 50; i++) {
      const open = await svc.app.db('api_leases').where({ org_id: orgId }).whereNull('settled_at').pluck('id');
      const lease = [...leases.values()].find((l) => open.includes(l.id) && l.granted - l.spent >= room);
      if (lease) return lease;
      await statuses(token, 40, 8);
    }
    throw new Error('no lease with room');
  }

  it('answers a call from a lease only once its journal byte is written', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 10_000 });
    const principal = await svc.app.principals.authenticate(`Bearer ${token}`, new Date());
    const lease = await heldLease(org.id, token, 10);
    const before = fs.statSync(lease.file).size;
    // Ten calls admitted in one turn of the event loop: each, when answered, finds every byte written.
    const seen = await Promise.all(
      Array.from({ length: 10 }, () =>
        svc.app.admitter.admit(principal, { billable: true }).then(() => fs.statSync(lease.file).size - before),
      ),
    );
    expect(seen).to.deep.equal(Array(10).fill(10));
    const b = await books(org.id);
    expect(b.calls).to.equal(b.debited);
  });

  it('refuses, unbilled, the calls whose journal bytes cannot be written', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 10_000 });
    const principal = await svc.app.principals.authenticate(`Bearer ${token}`, new Date());
    const lease = await heldLease(org.id, token, 5);
    const billedBefore = (await svc.app.db('api_leases').where({ id: lease.id }).first()).spent_at_take;
    // The journal's descriptor swapped for a read-only one: the write fails (EBADF).
    const writable = lease.fd;
    lease.fd = fs.openSync(lease.file, 'r');
    const journaled = fs.statSync(lease.file).size;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => svc.app.admitter.admit(principal, { billable: true })),
    );
    fs.closeSync(lease.fd);
    lease.fd = writable;
    expect(outcomes.map((o) => o.status)).to.deep.equal(Array(5).fill('rejected'));
    expect(fs.statSync(lease.file).size).to.equal(journaled);
    // Settled, the lease bills the calls of its take and its journal's bytes, not the refused ones.
    await svc.app.admitter.settleAll();
    const settled = await svc.app.db('api_leases').where({ id: lease.id }).first();
    expect(Number(settled.spent)).to.equal(Number(billedBefore) + journaled);
  });

  it('never admits beyond the wallet: a lease takes only what it can pay for', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 150 });
    const r = await statuses(token, 400, 16);
    expect(r.ok).to.equal(150);
    expect(new Set(r.refused)).to.deep.equal(new Set([402]));
    const b = await books(org.id);
    expect(b).to.include({ calls: 150, debited: 150, balance: 0, open: 0 });
  });

  it('never admits beyond the window: the limit holds with leases held', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly' });
    svc.clock.set('2026-11-27T10:00:05.000Z');
    const r = await statuses(token, 1_100, 16, '/v1/status');
    expect(r.ok).to.equal(1_000);
    expect(new Set(r.refused)).to.deep.equal(new Set([429]));
    const last = await svc.get('/v1/status', token);
    expect(last.status).to.equal(429);
    expect(last.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect((await books(org.id)).open).to.equal(0);
  });

  it('keeps organizations apart: one organization’s lease never admits another’s calls', async () => {
    const a = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 1_000 });
    const b = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 5 });
    // A holds a lease when B calls.
    expect((await statuses(a.token, 50, 4)).ok).to.equal(50);
    const rb = await statuses(b.token, 40, 4);
    expect(rb.ok).to.equal(5);
    expect((await statuses(a.token, 50, 4)).ok).to.equal(50);
    expect(await books(a.org.id)).to.include({ calls: 100, debited: 100, balance: 900 });
    expect(await books(b.org.id)).to.include({ calls: 5, debited: 5, balance: 0 });
    const foreign = await svc.app.db('api_leases').where({ org_id: b.org.id }).where('granted', '>', 5);
    expect(foreign).to.deep.equal([]);
  });

  it('removes the journal a process left behind for a lease already settled, and no other file', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 1_000 });
    expect((await statuses(token, 20, 4)).ok).to.equal(20);
    await books(org.id);
    const leases = await svc.app.db('api_leases').where({ org_id: org.id }).whereNotNull('settled_at').pluck('id');
    expect(leases).to.not.be.empty;
    // As if a process had stopped between a lease's settle and the removal of its journal.
    const dir = leaseDirOf(svc.app.config);
    const left = `${dir}/${leases[0]}`;
    const stranger = `${dir}/01ARZ3NDEKTSV4RRFFQ69G5FAV`;
    fs.writeFileSync(left, '...');
    fs.writeFileSync(stranger, '.');
    try {
      await svc.app.admitter.sweep();
      expect(fs.existsSync(left)).to.equal(false);
      expect(fs.existsSync(stranger)).to.equal(true);
      expect((await books(org.id)).calls).to.equal(20);
    } finally {
      fs.rmSync(stranger, { force: true });
    }
  });

  it('loses nothing when a process is killed with SIGKILL under load: every answered call billed once', async () => {
    const { org, token } = await svc.createOrg({ plan: 'starter_monthly', balanceMinor: 5_000 });
    // Two service processes on the same Postgres, journaling where this one sweeps.
    const shared = {
      DATABASE_URL: svc.app.databaseUrl,
      API_LEASE_DIR: leaseDirOf(svc.app.config),
      API_LEASE_CALLS: '64',
      API_LEASE_SECONDS: '2',
      PLATFORM_RATE_LIMIT_PER_MIN: '1000000',
      ENABLE_REDIRECT: 'false',
      ENABLE_WORKER: 'false',
      LOG_LEVEL: 'warn',
    };
    const envs = [await embeddedServiceEnv('leases-a', shared), await embeddedServiceEnv('leases-b', shared)];
    for (const e of envs) e.env.DATABASE_URL = svc.app.databaseUrl;
    const procs = envs.map((e) => startService(e.env));
    const counts = procs.map(() => ({ ok: 0, paymentRequired: 0, other: 0, failed: 0 }));
    try {
      await Promise.all(procs.map((p) => p.ready()));
      let stop = false;
      const load = envs.map((e, i) =>
        Promise.all(
          Array.from({ length: 8 }, async () => {
            while (!stop) {
              try {
                const res = await fetch(`http://127.0.0.1:${e.apiPort}/v1/organization`, {
                  headers: { Authorization: `Bearer ${token}` },
                });
                await res.arrayBuffer();
                if (res.status === 200) counts[i].ok++;
                else if (res.status === 402) counts[i].paymentRequired++;
                else counts[i].other++;
              } catch {
                counts[i].failed++;
                if (i === 0) return; // the killed process: its connections are gone
              }
            }
          }),
        ),
      );
      // Mid-load: both processes have answered and hold leases.
      await waitFor(() => counts[0].ok > 300 && counts[1].ok > 300, Boolean, 120_000, 20);
      procs[0].server.kill('SIGKILL');
      await procs[0].exited;
      // The other process goes on until the wallet runs dry (the killed lease's unspent calls
      // come back to it once swept), then stops.
      await waitFor(() => counts[1].paymentRequired > 50, Boolean, 120_000, 50);
      stop = true;
      await Promise.all(load);
    } finally {
      for (const p of procs) if (p.server.exitCode === null && p.server.signalCode === null) p.server.kill('SIGTERM');
      await Promise.all(procs.map((p) => p.exited));
    }
    // The killed process's lease expires and this process settles it from the journal.
    await waitFor(
      async () =>
        Number((await svc.app.db('api_leases').where({ org_id: org.id }).whereNull('settled_at').count())[0].count),
      (n) => n === 0,
      60_000,
      200,
    );
    const b = await books(org.id);
    const answered = counts[0].ok + counts[1].ok;
    expect(counts[0].other + counts[1].other, JSON.stringify(counts)).to.equal(0);
    // Billed once: what the wallet lost is what the usage counts, and it is every answered call
    // plus at most the calls the kill cut off after admitting them (their clients saw an error).
    expect(b.debited).to.equal(b.calls);
    expect(b.balance).to.equal(5_000 - b.calls);
    expect(b.calls).to.be.at.least(answered);
    expect(b.calls - answered).to.be.at.most(counts[0].failed);
    // The limit: never more answered than the wallet paid for; the wallet is spent whole but for
    // what the processes' last leases held when the surviving one was refused (one lease each).
    expect(answered).to.be.at.most(5_000);
    expect(b.balance).to.be.at.most(2 * 64);
    // The journals are gone once their leases are settled and a sweep has run (one of a process
    // stopped between a settle and the journal's removal goes then).
    await svc.app.admitter.sweep();
    expect(fs.readdirSync(leaseDirOf(svc.app.config))).to.deep.equal([]);
  });
});
