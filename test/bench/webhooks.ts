// make bench-webhooks: 10,000 events written to the outbox (code.created, in transactions of 500,
// as a busy organization would) and delivered by graphile-worker to a local receiver in another
// process. Prints events per second and the enqueue-to-delivery latency (the event's created_at to
// its delivered_at, both on this machine's clock), beside a baseline from the same run: the same
// signed bodies POSTed straight to the receiver at the same concurrency, with no queue.
//   BENCH_EVENTS=10000 WORKER_CONCURRENCY=4 make bench-webhooks
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { emitEvents } from '../../server/webhooks/events.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { signedHeaders } from '../../server/webhooks/signing.js';
import { startWorker } from '../../workers/index.js';
import { machine, startChild, stopChild } from './lib.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BATCH = 500;

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-webhooks-'));
await fs.chmod(root, 0o755);
const log = createLogger('warn');
const pg = await startEmbeddedPostgres({ dataDir: root, port: 0, database: 'qr', log, ephemeral: process.env.BENCH_EPHEMERAL === '1' });
const receiver = await startChild(process.execPath, ['--import', 'tsx', 'test/bench/webhook-receiver.ts'], {});
const config = loadConfig(
  { ...process.env, LOG_LEVEL: 'warn' },
  {
    dataDir: path.join(root, 'svc'),
    webhookAllowedTargets: ['127.0.0.1/32'],
  },
);
const app = await boot(config, log, { databaseUrl: pg.url, clickhouse: false });

function ms(v: number): string {
  return `${v.toFixed(1)} ms`;
}

/** The baseline: the same kind of signed POST straight to the receiver, `concurrency` at a time. */
async function bare(n: number, concurrency: number, body: string): Promise<{ perSecond: number; p95: number }> {
  const agent = new http.Agent({ keepAlive: false });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        const headers = signedHeaders(
          ['whsec_' + Buffer.alloc(32, 7).toString('base64')],
          `msg_${next}`,
          new Date(),
          body,
        );
        await new Promise<void>((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port: receiver.port,
              path: '/hook',
              method: 'POST',
              agent,
              headers: { 'content-type': 'application/json', ...headers },
            },
            (res) => {
              res.resume();
              res.on('end', resolve);
            },
          );
          req.on('error', reject);
          req.end(body);
        });
        latencies.push(performance.now() - t);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: n / ((performance.now() - started) / 1000), p95: latencies[Math.floor(latencies.length * 0.95)] };
}

try {
  const { org } = await createOrganization(app, {
    name: 'Bench',
    slug: 'bench',
    planCode: 'enterprise_monthly',
    currency: 'EUR',
    ownerEmail: 'bench@example.com',
  });
  await createWebhook(app, org, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ['code.created'] });
  const sample = {
    ulid: '01J0000000000000000000000',
    slug: 'bench/sample',
    destination: 'https://example.com/a/fairly/typical/landing-page?utm_source=qr',
    status: 'active',
  };

  const runner = await startWorker(app);
  const started = Date.now();
  for (let i = 0; i < EVENTS; i += BATCH) {
    const data = Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, j) => ({ ...sample, n: i + j }));
    await app.db.transaction((trx) => emitEvents(trx, org.id, 'code.created', data, app.clock.now()));
  }
  const enqueued = Date.now() - started;
  const deadline = Date.now() + 15 * 60_000;
  for (;;) {
    const [{ done, failed }] = await app
      .db('webhook_deliveries')
      .select(app.db.raw(`count(*) filter (where status = 'succeeded')::int as done`))
      .select(app.db.raw(`count(*) filter (where status = 'failed')::int as failed`));
    if (done + failed >= EVENTS) break;
    if (Date.now() > deadline) throw new Error(`only ${done} of ${EVENTS} delivered after 15 minutes`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await runner.stop();
  const { rows } = await app.db.raw(
    `select count(*) filter (where d.status = 'succeeded')::int as delivered,
            extract(epoch from max(d.delivered_at) - min(e.created_at)) * 1000 as span_ms,
            percentile_cont(0.5) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p50,
            percentile_cont(0.95) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p95,
            percentile_cont(0.99) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p99,
            avg(d.latency_ms) as http_ms
       from webhook_deliveries d join webhook_events e on e.id = d.event_id`,
  );
  const r = rows[0];
  const base = await bare(EVENTS, config.workerConcurrency, JSON.stringify({ type: 'code.created', data: sample }));
  const perSecond = (r.delivered / Number(r.span_ms)) * 1000;
  process.stdout.write(
    `\nbench-webhooks  machine: ${machine()}  events: ${EVENTS}  worker concurrency: ${config.workerConcurrency}\n\n` +
      `outbox + graphile-worker: ${r.delivered} delivered in ${(Number(r.span_ms) / 1000).toFixed(1)} s = ${perSecond.toFixed(0)} events/s ` +
      `(all enqueued in ${(enqueued / 1000).toFixed(1)} s)\n` +
      `  enqueue-to-delivery latency: p50 ${ms(Number(r.p50))}, p95 ${ms(Number(r.p95))}, p99 ${ms(Number(r.p99))}; ` +
      `HTTP attempt ${ms(Number(r.http_ms))} on average\n` +
      `baseline, the same signed POSTs straight to the receiver (${config.workerConcurrency} at a time, no queue): ` +
      `${base.perSecond.toFixed(0)} requests/s, p95 ${ms(base.p95)}\n` +
      `the queue delivers at ${((perSecond / base.perSecond) * 100).toFixed(1)}% of the bare rate\n\n`,
  );
} finally {
  await stopChild(receiver.child);
  await app.close();
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
