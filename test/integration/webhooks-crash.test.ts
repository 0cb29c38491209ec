// A webhook worker killed (SIGKILL) while its receiver holds the request loses nothing: the
// delivery's lease runs out, the sweep queues it again, and another worker delivers the same event
// with the same webhook-id.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { sweepDeliveries } from '../../server/webhooks/delivery.js';
import { startWorker } from '../../workers/index.js';
import { fallbackDomain } from '../helpers/fixtures.js';
import { startTestService, type TestService } from '../helpers/harness.js';
import { verified, WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('a webhook worker killed mid-delivery', function () {
  this.timeout(120_000);
  let svc: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    receiver = await WebhookReceiver.start();
    svc = await startTestService({ config: { webhookAllowedTargets: ['127.0.0.1/32'] } });
  });
  after(async () => {
    await svc.close();
    await receiver.close();
  });

  it('loses nothing: the delivery is sent again, with the same webhook-id, by the next worker', async () => {
    const o = await svc.createOrg();
    const hook = await svc.post('/v1/webhooks', o.token, { url: receiver.url(), events: ['code.created'] });
    expect(hook.status).to.equal(201);
    // The first request is held open and never answered; the next ones succeed.
    receiver.answer = (n) => (n === 0 ? 'hang' : { status: 200 });

    const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
      env: {
        ...process.env,
        DATABASE_URL: svc.app.databaseUrl,
        DATA_DIR: svc.app.config.dataDir,
        CLICKHOUSE_URL: '',
        WEBHOOK_ALLOWED_TARGETS: '127.0.0.1/32',
        WEBHOOK_TIMEOUT_MS: '200000',
        LOG_LEVEL: 'silent',
      },
      stdio: 'ignore',
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      worker.on('exit', (_code, signal) => resolve(signal)),
    );
    try {
      const code = await svc.post('/v1/qr-codes', o.token, {
        slug: 'crash',
        destination: 'https://example.com/crash',
        domain_ulid: (await fallbackDomain(svc.app)).ulid,
      });
      expect(code.status).to.equal(201);
      await receiver.waitFor(1, 60_000);
      worker.kill('SIGKILL');
      expect(await exited).to.equal('SIGKILL');
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
    }
    const delivery = await svc.app.db('webhook_deliveries').where({ org_id: o.org.id }).first();
    expect(delivery).to.include({ status: 'pending', attempts: 0 });
    expect(delivery.lease_until).to.not.equal(null);

    // Overdue, but the killed attempt's lease (its 200 s timeout + 30 s) still runs: not yet.
    svc.clock.advance(150_000);
    expect(await sweepDeliveries(svc.app)).to.equal(0);
    // Lease over: the sweep queues it again (the new attempt signs 4 minutes ahead, within the
    // 5 minutes the reference library tolerates).
    svc.clock.advance(90_000);
    expect(await sweepDeliveries(svc.app)).to.equal(1);
    const runner = await startWorker(svc.app);
    try {
      const got = await receiver.waitFor(2);
      expect(got[1].headers['webhook-id']).to.equal(got[0].headers['webhook-id']);
      expect(verified(hook.body.secret, got[1]).data.slug).to.match(/\/crash$/);
    } finally {
      await runner.stop();
    }
    const done = await svc.app.db('webhook_deliveries').where({ id: delivery.id }).first();
    expect(done).to.include({ status: 'succeeded', attempts: 1 });
  });
});
