// Prometheus metrics, one registry per application context (no global default registry, so tests
// can build several contexts in one process).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { spillBacklog } from './analytics/scan-spill.js';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'listener' | 'method' | 'route' | 'status'>;
  httpDuration: Histogram<'listener' | 'method' | 'route'>;
  admissionBatch: Histogram<never>;
  principalCache: Counter<'result'>;
  domainTransitions: Counter<'transition'>;
  passwordChecks: Counter<never>;
  passwordHashes: Counter<never>;
  orphanScansDropped: Counter<never>;
  webhookDeliveries: Counter<'outcome'>;
  liveStreamBatches: Counter<'source'>;
}

/**
 * `spillDir`: the scan spill directory, read at each scrape: its backlog and quarantine are shared by
 * every process of the service (REDIRECT_PROCESSES), so the figures are the service's, not one process's.
 */
export function createMetrics(collectDefaults: boolean, spillDir?: string): Metrics {
  const registry = new Registry();
  if (collectDefaults) collectDefaultMetrics({ register: registry });
  if (spillDir) {
    const scrape = () => spillBacklog(spillDir);
    let last = scrape();
    // One directory listing per scrape, shared by the three gauges (the first collect reads it).
    new Gauge({
      name: 'scan_spill_backlog_files',
      help: 'Scan spill files and journals of gone processes waiting for ClickHouse (DATA_DIR/spill).',
      registers: [registry],
      collect() {
        last = scrape();
        this.set(last.files);
      },
    });
    new Gauge({
      name: 'scan_spill_backlog_bytes',
      help: 'Bytes of scan spill files and journals of gone processes waiting for ClickHouse.',
      registers: [registry],
      collect() {
        this.set(last.bytes);
      },
    });
    new Gauge({
      name: 'scan_quarantined_batches',
      help: 'Scan batches ClickHouse could not parse, moved to DATA_DIR/spill/quarantine (qrctl quarantine list).',
      registers: [registry],
      collect() {
        this.set(last.quarantined);
      },
    });
  }
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by listener, method, route template and status.',
      labelNames: ['listener', 'method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency, by listener, method and route template.',
      labelNames: ['listener', 'method', 'route'],
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    admissionBatch: new Histogram({
      name: 'api_admission_batch_size',
      help: 'API calls admitted together in one Postgres round trip (group commit).',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry],
    }),
    principalCache: new Counter({
      name: 'api_principal_cache_total',
      help: 'Token authentications answered from the in-memory cache (hit) or from Postgres (miss).',
      labelNames: ['result'],
      registers: [registry],
    }),
    domainTransitions: new Counter({
      name: 'domain_transitions_total',
      help: 'Custom-domain status and certificate transitions (server/domains/lifecycle.ts), by transition.',
      labelNames: ['transition'],
      registers: [registry],
    }),
    passwordChecks: new Counter({
      name: 'redirect_password_checks_total',
      help: 'Password-form answers checked against a code’s hash (scrypt runs), after the throttle admitted them.',
      registers: [registry],
    }),
    passwordHashes: new Counter({
      name: 'code_password_hashes_total',
      help: 'Code passwords hashed (scrypt runs) when codes are written; previews and bulk staging hash none.',
      registers: [registry],
    }),
    orphanScansDropped: new Counter({
      name: 'redirect_orphan_scans_dropped_total',
      help: 'Requests for unknown or inactive slugs not recorded as orphan scans (beyond 100 per domain per second).',
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts, by outcome (succeeded, failed).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    liveStreamBatches: new Counter({
      name: 'live_stream_batches_total',
      help: 'Stored scan batches the live stream hub delivered, by where their rows came from (handed: from this process, read_back: from ClickHouse).',
      labelNames: ['source'],
      registers: [registry],
    }),
  };
}
