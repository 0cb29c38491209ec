// make bench-webhooks: events written to the outbox (code.created) and delivered by graphile-worker
// to a local receiver in another process, in two phases:
//   burst:  10,000 events in transactions of 500, as fast as they can be written: events per
//           second and the enqueue-to-delivery latency (the event's created_at to its delivered_at,
//           both on this machine's clock), which here is mostly time spent waiting in the backlog;
//   steady: events at a steady rate below that throughput (200/s in transactions of 20): the
//           latency one event sees when the queue keeps up.
// Baseline from the same run: the same signed POSTs straight to the receiver, with the same number
// in flight and kept-alive connections, no queue and no database.
//   BENCH_EVENTS=10000 BENCH_STEADY_RATE=200 BENCH_STEADY_EVENTS=2000 make bench-webhooks
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { boot } from '../../server/bootstrap.js';
import { loadConfig } from '../../server/config.js';
import { createLogger } from '../../server/logger.js';
import { createOrganization } from '../../server/organizations/service.js';
import { startEmbeddedPostgres } from '../../server/stores/postgres.js';
import { PARALLEL } from '../../server/webhooks/delivery.js';
import { emitEvents } from '../../server/webhooks/events.js';
import { createWebhook } from '../../server/webhooks/service.js';
import { signedHeaders } from '../../server/webhooks/signing.js';
import { startWorker } from '../../workers/index.js';
import { machine, startChild, stopChild } from './lib.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BATCH = 500;
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 200);
const STEADY_EVENTS = Number(process.env.BENCH_STEADY_EVENTS ?? 2000);
const STEADY_BATCH = 20;

const root = await fs.mkdtemp(path.join(os.tmpdir(), 'qr-bench-webhooks-'));
await fs.chmod(root, 0o755);
const log = createLogger('warn');
const pg = await startEmbeddedPostgres({
  dataDir: root,
  port: 0,
  database: 'qr',
  log,
  ephemeral: process.env.BENCH_EPHEMERAL === '1',
});
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
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
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
  const emit = (n: number, from: number) =>
    app.db.transaction((trx) =>
      emitEvents(
        trx,
        org.id,
        'code.created',
        Array.from({ length: n }, (_, j) => ({ ...sample, n: from + j })),
        app.clock.now(),
      ),
    );
  const delivered = async (total: number) => {
    const deadline = Date.now() + 15 * 60_000;
    for (;;) {
      const [{ settled }] = await app
        .db('webhook_deliveries')
        .select(app.db.raw(`count(*) filter (where status <> 'pending')::int as settled`));
      if (settled >= total) return;
      if (Date.now() > deadline) throw new Error(`only ${settled} of ${total} settled after 15 minutes`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** Figures of the deliveries of events with id > after. */
  const figures = async (after: number) => {
    const { rows } = await app.db.raw(
      `select count(*) filter (where d.status = 'succeeded')::int as delivered, max(e.id) as last,
              extract(epoch from max(d.delivered_at) - min(e.created_at)) * 1000 as span_ms,
              percentile_cont(0.5) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p50,
              percentile_cont(0.95) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p95,
              percentile_cont(0.99) within group (order by extract(epoch from d.delivered_at - e.created_at) * 1000) as p99,
              avg(d.latency_ms) as http_ms
         from webhook_deliveries d join webhook_events e on e.id = d.event_id
        where e.id > ?`,
      [after],
    );
    return rows[0];
  };

  const started = Date.now();
  for (let i = 0; i < EVENTS; i += BATCH) await emit(Math.min(BATCH, EVENTS - i), i);
  const enqueued = Date.now() - started;
  await delivered(EVENTS);
  const burst = await figures(0);

  const steadyStart = Date.now();
  for (let i = 0; i < STEADY_EVENTS; i += STEADY_BATCH) {
    await emit(Math.min(STEADY_BATCH, STEADY_EVENTS - i), EVENTS + i);
    const due = steadyStart + ((i + STEADY_BATCH) / STEADY_RATE) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
  }
  await delivered(EVENTS + STEADY_EVENTS);
  const steady = await figures(Number(burst.last));
  await runner.stop();

  const base = await bare(EVENTS, PARALLEL, JSON.stringify({ type: 'code.created', data: sample }));
  const perSecond = (burst.delivered / Number(burst.span_ms)) * 1000;
  const lat = (r: Record<string, unknown>) =>
    `p50 ${ms(Number(r.p50))}, p95 ${ms(Number(r.p95))}, p99 ${ms(Number(r.p99))}; HTTP attempt ${ms(Number(r.http_ms))} on average`;
  process.stdout.write(
    `\nbench-webhooks  machine: ${machine()}  worker concurrency: ${config.workerConcurrency}, ${PARALLEL} requests in flight per endpoint\n\n` +
      `burst:  ${burst.delivered} of ${EVENTS} events delivered in ${(Number(burst.span_ms) / 1000).toFixed(1)} s = ${perSecond.toFixed(0)} events/s ` +
      `(written to the outbox in ${(enqueued / 1000).toFixed(1)} s)\n` +
      `        enqueue-to-delivery latency: ${lat(burst)}\n` +
      `steady: ${steady.delivered} of ${STEADY_EVENTS} events at ${STEADY_RATE}/s; enqueue-to-delivery latency: ${lat(steady)}\n` +
      `baseline, the same signed POSTs straight to the receiver (${PARALLEL} in flight, kept-alive, no queue): ` +
      `${base.perSecond.toFixed(0)} requests/s, p95 ${ms(base.p95)}\n` +
      `the outbox delivers at ${((perSecond / base.perSecond) * 100).toFixed(1)}% of the bare rate\n\n`,
  );
} finally {
  await stopChild(receiver.child);
  await app.close();
  await pg.stop();
  await fs.rm(root, { recursive: true, force: true });
}
