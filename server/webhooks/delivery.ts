// Delivery of webhook events, one attempt per graphile-worker job (workers/tasks/webhook-deliver.ts).
//
// An attempt first leases its delivery (lease_until), so two jobs never send it at once, then POSTs
// the signed body and records the outcome in one transaction with the job of the next attempt.
// Retries follow RETRY_SCHEDULE_S: three within the first minute, then growing to a day, about 75
// hours in all. An endpoint whose attempts have all failed for 3 days, or that answers 410 Gone, is
// disabled and every other enabled endpoint of the organization gets a webhook.disabled event.
// A worker killed mid-attempt loses nothing: once the lease is over the sweep (every minute) queues
// the delivery again, and the receiver sees the same webhook-id (at-least-once delivery).
import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { emitEvent, eventBody, messageId } from './events.js';
import { enqueueDelivery } from './service.js';
import { openSecret, signedHeaders } from './signing.js';
import { postOnce, TargetPolicy, type PostOutcome } from './target.js';

/** Seconds to wait after failed attempt n (index n - 1); after the last one the delivery fails. */
export const RETRY_SCHEDULE_S = [5, 15, 30, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];
/** An endpoint failing for this long without a success is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
/** A lease outlives the attempt's timeout by this much. */
const LEASE_MARGIN_MS = 30_000;
/** A due delivery without a running attempt for this long is queued again by the sweep. */
export const SWEEP_AFTER_MS = 2 * 60_000;
export const SWEEP_BATCH = 500;

export type AttemptResult = 'succeeded' | 'retrying' | 'failed' | 'skipped';

interface LeasedDelivery {
  id: number;
  org_id: number;
  endpoint_id: number;
  attempts: number;
  url: string;
  endpoint_ulid: string;
  enabled: boolean;
  secret_enc: Buffer;
  previous_secret_enc: Buffer | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  event_ulid: string;
  type: string;
  data: unknown;
  event_created_at: Date;
}

/** Delay before the attempt after failed attempt `n` (1-based), or null when none is left. */
export function retryDelayMs(n: number, retryAfterS: number | null, random = Math.random): number | null {
  const base = RETRY_SCHEDULE_S[n - 1];
  if (base === undefined) return null;
  // Up to 10% of jitter on the long waits, so retries of many endpoints do not come in waves.
  const jittered = base >= 300 ? base * (1 + random() * 0.1) : base;
  // A Retry-After asking for more (within a day) is honoured.
  const wanted = retryAfterS ? Math.min(retryAfterS, 86_400) : 0;
  return Math.round(Math.max(jittered, wanted) * 1000);
}

async function lease(app: AppContext, deliveryId: number, now: Date): Promise<LeasedDelivery | undefined> {
  const { rows } = await app.db.raw<{ rows: LeasedDelivery[] }>(
    `with d as (
       update webhook_deliveries set lease_until = ?
        where id = ? and status = 'pending' and (lease_until is null or lease_until < ?)
       returning *)
     select d.id, d.org_id, d.endpoint_id, d.attempts, w.url, w.ulid as endpoint_ulid, w.enabled, w.secret_enc,
            w.previous_secret_enc, w.previous_secret_expires_at, w.failing_since,
            e.ulid as event_ulid, e.type, e.data, e.created_at as event_created_at
       from d
       join webhook_endpoints w on w.id = d.endpoint_id
       join webhook_events e on e.id = d.event_id`,
    [new Date(now.getTime() + app.config.webhookTimeoutMs + LEASE_MARGIN_MS), deliveryId, now],
  );
  return rows[0];
}

/**
 * One attempt of a delivery. `manual` (a redelivery) is a single attempt: when it fails the
 * delivery is failed, with no retries. Returns what became of the delivery.
 */
export async function attemptDelivery(
  app: AppContext,
  deliveryId: number,
  opts: { manual?: boolean } = {},
): Promise<AttemptResult> {
  const d = await lease(app, deliveryId, app.clock.now());
  if (!d) return 'skipped';
  if (!d.enabled) {
    await app
      .db('webhook_deliveries')
      .where({ id: d.id })
      .update({ status: 'failed', lease_until: null, next_attempt_at: null, error: 'The endpoint is disabled.' });
    return 'failed';
  }
  const sentAt = app.clock.now();
  const secrets = [openSecret(app.secretKey, d.secret_enc)];
  if (d.previous_secret_enc && d.previous_secret_expires_at && d.previous_secret_expires_at > sentAt) {
    secrets.push(openSecret(app.secretKey, d.previous_secret_enc));
  }
  const body = eventBody({ type: d.type, data: d.data, created_at: d.event_created_at });
  const outcome = await postOnce(new URL(d.url), body, signedHeaders(secrets, messageId(d.event_ulid), sentAt, body), {
    policy: new TargetPolicy(app.config.webhookAllowedTargets),
    timeoutMs: app.config.webhookTimeoutMs,
  });
  app.metrics.webhookDeliveries.inc({ outcome: outcome.error === null ? 'succeeded' : 'failed' });
  if (outcome.error === null) {
    await recordSuccess(app, d, outcome, sentAt, opts.manual ?? false);
    return 'succeeded';
  }
  return app.db.transaction((trx) => recordFailure(app, trx, d, outcome, sentAt, opts.manual ?? false));
}

/** One statement: the attempt, the delivery done, the endpoint healthy again. */
async function recordSuccess(app: AppContext, d: LeasedDelivery, o: PostOutcome, at: Date, manual: boolean) {
  await app.db.raw(
    `with a as (
       insert into webhook_delivery_attempts (delivery_id, attempt, manual, attempted_at, response_status, latency_ms)
       values (?, ?, ?, ?, ?, ?)),
     d as (
       update webhook_deliveries
          set status = 'succeeded', attempts = ?, last_attempt_at = ?, response_status = ?, latency_ms = ?,
              error = null, delivered_at = ?, next_attempt_at = null, lease_until = null
        where id = ?)
     update webhook_endpoints set failing_since = null where id = ? and failing_since is not null`,
    [
      d.id,
      d.attempts + 1,
      manual,
      at,
      o.status,
      o.latencyMs,
      d.attempts + 1,
      at,
      o.status,
      o.latencyMs,
      at,
      d.id,
      d.endpoint_id,
    ],
  );
}

async function recordFailure(
  app: AppContext,
  trx: Knex.Transaction,
  d: LeasedDelivery,
  o: PostOutcome,
  at: Date,
  manual: boolean,
): Promise<AttemptResult> {
  const n = d.attempts + 1;
  await trx('webhook_delivery_attempts').insert({
    delivery_id: d.id,
    attempt: n,
    manual,
    attempted_at: at,
    response_status: o.status,
    latency_ms: o.latencyMs,
    error: o.error,
  });
  const failingSince = d.failing_since ?? at;
  const gone = o.status === 410;
  const disable = gone || at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS;
  const delay = manual || disable ? null : retryDelayMs(n, o.retryAfter);
  const next = delay === null ? null : new Date(at.getTime() + delay);
  await trx('webhook_deliveries')
    .where({ id: d.id })
    .update({
      status: next ? 'pending' : 'failed',
      attempts: n,
      last_attempt_at: at,
      response_status: o.status,
      latency_ms: o.latencyMs,
      error: o.error,
      next_attempt_at: next,
      lease_until: null,
    });
  if (next) await enqueueDelivery(trx, d.id, { runAt: next });
  if (disable) await disableEndpoint(app, trx, d, gone ? 'gone' : 'failing', failingSince, at);
  else if (!d.failing_since) await trx('webhook_endpoints').where({ id: d.endpoint_id }).update({ failing_since: at });
  return next ? 'retrying' : 'failed';
}

/** Disables the endpoint, fails its waiting deliveries and tells the organization's other endpoints. */
async function disableEndpoint(
  app: AppContext,
  trx: Knex.Transaction,
  d: LeasedDelivery,
  reason: 'failing' | 'gone',
  failingSince: Date,
  at: Date,
): Promise<void> {
  const disabled = await trx('webhook_endpoints')
    .where({ id: d.endpoint_id, enabled: true })
    .update({ enabled: false, disabled_reason: reason, disabled_at: at, failing_since: failingSince, updated_at: at });
  if (!disabled) return;
  await trx('webhook_deliveries')
    .where({ endpoint_id: d.endpoint_id, status: 'pending' })
    .update({ status: 'failed', next_attempt_at: null, lease_until: null, error: 'The endpoint was disabled.' });
  app.log.warn({ webhook: d.endpoint_ulid, org_id: d.org_id, reason }, 'webhook endpoint disabled');
  await emitEvent(
    trx,
    d.org_id,
    'webhook.disabled',
    {
      webhook: { ulid: d.endpoint_ulid, url: d.url },
      reason,
      failing_since: failingSince.toISOString(),
      disabled_at: at.toISOString(),
    },
    at,
  );
}

/**
 * Queues again every due delivery that has no attempt in flight and should have been tried a while
 * ago: its job was lost with a killed worker (whose lock graphile-worker keeps for hours).
 */
export async function sweepDeliveries(app: AppContext, now = app.clock.now()): Promise<number> {
  return app.db.transaction(async (trx) => {
    const due = await trx('webhook_deliveries')
      .where({ status: 'pending' })
      .where('next_attempt_at', '<=', new Date(now.getTime() - SWEEP_AFTER_MS))
      .where((q) => q.whereNull('lease_until').orWhere('lease_until', '<', now))
      .orderBy('next_attempt_at')
      .limit(SWEEP_BATCH)
      .pluck('id');
    for (const id of due) await enqueueDelivery(trx, id);
    return due.length;
  });
}

/** Events (with their deliveries and attempts) older than this are deleted by webhook-log-prune. */
export const LOG_RETENTION_DAYS = 30;

export async function pruneDeliveryLog(app: AppContext, now = app.clock.now()): Promise<number> {
  return app
    .db('webhook_events')
    .where('created_at', '<', new Date(now.getTime() - LOG_RETENTION_DAYS * 86_400_000))
    .delete();
}
