// Delivery of webhook events. Each endpoint has one graphile-worker job at a time (job key
// webhook:<id>, workers/tasks/webhook-deliver.ts) that drains the endpoint's due deliveries: it
// leases a batch (lease_until, so two jobs never send one delivery at once), POSTs them a few at a
// time, records the outcomes in a few statements, and finally queues itself for the next retry
// due. One job per endpoint keeps the per-delivery cost in Postgres low and never floods one
// receiver with more than PARALLEL requests.
//
// Retries follow RETRY_SCHEDULE_S: three within the first minute, then growing to a day, about 75
// hours in all. An endpoint whose attempts have all failed for 3 days, or that answers 410 Gone, is
// disabled and every other enabled endpoint of the organization gets a webhook.disabled event.
// A worker killed mid-attempt loses nothing: once the lease is over the endpoint's next job, or
// the sweep (every minute), sends the delivery again and the receiver sees the same webhook-id
// (at-least-once delivery).
import type http from 'node:http';
import type { Knex } from 'knex';
import { Sealer, SealedValueError } from '../at-rest.js';
import type { AppContext } from '../context.js';
import { emitEvent, eventBody, messageId } from './events.js';
import { enqueueEndpoint } from './service.js';
import { secretPurpose, signedHeaders } from './signing.js';
import { endpointAgent, postOnce, TargetPolicy, type PostOutcome } from './target.js';
import { inParallel } from '../parallel.js';

/** Seconds to wait after failed attempt n (index n - 1); after the last one the delivery fails. */
export const RETRY_SCHEDULE_S = [5, 15, 30, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];
/** An endpoint failing for this long without a success is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;
/** Deliveries leased at once, and requests in flight to one endpoint. */
const DRAIN_BATCH = 50;
export const PARALLEL = 8;
/** A drain hands its worker back after this long (the endpoint's next job goes on). */
const DRAIN_BUDGET_MS = 30_000;
/** A lease outlives the attempt's timeout by this much. */
const LEASE_MARGIN_MS = 30_000;
/** A due delivery with no attempt in flight for this long is queued again by the sweep. */
const SWEEP_AFTER_MS = 2 * 60_000;

export type AttemptResult = 'succeeded' | 'retrying' | 'failed';

interface Leased {
  id: number;
  org_id: number;
  endpoint_id: number;
  attempts: number;
  manual: boolean;
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

interface Attempted {
  d: Leased;
  at: Date;
  outcome: PostOutcome;
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

/** Leases up to `n` due deliveries of the endpoint, oldest first, with what sending them needs. */
async function leaseDue(app: AppContext, endpointId: number, now: Date, n: number): Promise<Leased[]> {
  const { rows } = await app.db.raw<{ rows: Leased[] }>(
    `with due as (
       select id from webhook_deliveries
        where endpoint_id = ? and status = 'pending' and next_attempt_at <= ?
          and (lease_until is null or lease_until < ?)
        order by next_attempt_at, id
        limit ?
        for update skip locked),
     d as (
       update webhook_deliveries w set lease_until = ? from due where w.id = due.id returning w.*)
     select d.id, d.org_id, d.endpoint_id, d.attempts, d.manual, w.url, w.ulid as endpoint_ulid, w.enabled,
            w.secret_enc, w.previous_secret_enc, w.previous_secret_expires_at, w.failing_since,
            e.ulid as event_ulid, e.type, e.data, e.created_at as event_created_at
       from d
       join webhook_endpoints w on w.id = d.endpoint_id
       join webhook_events e on e.id = d.event_id
      order by d.next_attempt_at, d.id`,
    [endpointId, now, now, n, new Date(now.getTime() + app.config.webhookTimeoutMs + LEASE_MARGIN_MS)],
  );
  return rows;
}

/**
 * Sends the endpoint's due deliveries and records what became of each; then queues the endpoint's
 * job for its next due retry. Returns the outcome of every delivery attempted, by delivery id.
 */
export async function drainEndpoint(app: AppContext, endpointId: number): Promise<Map<number, AttemptResult>> {
  const results = new Map<number, AttemptResult>();
  const started = Date.now();
  const policy = new TargetPolicy(app.config.webhookAllowedTargets);
  const sealer = new Sealer(app.secretKey);
  // Connections are kept for the drain, per URL (a change of URL mid-drain gets new ones).
  const agents = new Map<string, http.Agent>();
  try {
    for (;;) {
      const batch = await leaseDue(app, endpointId, app.clock.now(), DRAIN_BATCH);
      if (!batch.length) break;
      const first = batch[0];
      if (!first.enabled) {
        await failLeased(app, batch, 'The endpoint is disabled.', results);
        break;
      }
      const sentAt = app.clock.now();
      const purpose = secretPurpose(first.endpoint_ulid);
      const sealed = [first.secret_enc];
      if (first.previous_secret_enc && first.previous_secret_expires_at && first.previous_secret_expires_at > sentAt) {
        sealed.push(first.previous_secret_enc);
      }
      let secrets: string[];
      try {
        secrets = sealed.map((v) => sealer.open(v, purpose).toString('utf8'));
      } catch (err) {
        if (!(err instanceof SealedValueError)) throw err;
        // SECRET_KEY changed: nothing can be signed until the secret is rotated.
        await failLeased(app, batch, 'The signing secret cannot be opened (SECRET_KEY changed); rotate it.', results);
        break;
      }
      const url = new URL(first.url);
      let agent = agents.get(first.url);
      if (!agent) agents.set(first.url, (agent = endpointAgent(url, PARALLEL)));
      const attempted = await inParallel(batch, PARALLEL, async (d): Promise<Attempted> => {
        const at = app.clock.now();
        const body = eventBody({ type: d.type, data: d.data, created_at: d.event_created_at });
        const headers = signedHeaders(secrets, messageId(d.event_ulid), at, body);
        const outcome = await postOnce(url, body, headers, {
          policy,
          timeoutMs: app.config.webhookTimeoutMs,
          agent,
        });
        return { d, at, outcome };
      });
      const ok = attempted.filter((a) => a.outcome.error === null);
      const failed = attempted.filter((a) => a.outcome.error !== null);
      app.metrics.webhookDeliveries.inc({ outcome: 'succeeded' }, ok.length);
      app.metrics.webhookDeliveries.inc({ outcome: 'failed' }, failed.length);
      let disabled = false;
      if (failed.length) {
        disabled = await app.db.transaction((trx) => recordFailures(app, trx, failed, ok.length > 0, results));
      }
      if (ok.length) await recordSuccesses(app, ok, results);
      if (disabled || Date.now() - started > DRAIN_BUDGET_MS) break;
    }
  } finally {
    for (const a of agents.values()) a.destroy();
  }
  await scheduleNext(app, endpointId);
  return results;
}

/** Leased deliveries that cannot be sent at all: failed, with the reason, without an attempt. */
async function failLeased(app: AppContext, batch: Leased[], reason: string, results: Map<number, AttemptResult>) {
  await app
    .db('webhook_deliveries')
    .whereIn(
      'id',
      batch.map((d) => d.id),
    )
    .update({ status: 'failed', lease_until: null, next_attempt_at: null, manual: false, error: reason });
  for (const d of batch) results.set(d.id, 'failed');
}

/** One statement: every attempt, every delivery done, the endpoint healthy again. */
async function recordSuccesses(app: AppContext, ok: Attempted[], results: Map<number, AttemptResult>) {
  await app.db.raw(
    `with v as (
       select * from unnest(?::bigint[], ?::int[], ?::boolean[], ?::timestamptz[], ?::int[], ?::int[])
         as v(id, attempt, manual, at, status, latency)),
     a as (
       insert into webhook_delivery_attempts (delivery_id, attempt, manual, attempted_at, response_status, latency_ms)
       select id, attempt, manual, at, status, latency from v),
     d as (
       update webhook_deliveries w
          set status = 'succeeded', attempts = v.attempt, last_attempt_at = v.at, response_status = v.status,
              latency_ms = v.latency, error = null, delivered_at = v.at + make_interval(secs => v.latency / 1000.0),
              next_attempt_at = null,
              lease_until = null, manual = false
         from v where w.id = v.id)
     update webhook_endpoints set failing_since = null where id = ? and failing_since is not null`,
    [
      ok.map((a) => a.d.id),
      ok.map((a) => a.d.attempts + 1),
      ok.map((a) => a.d.manual),
      ok.map((a) => a.at),
      ok.map((a) => a.outcome.status ?? 0),
      ok.map((a) => a.outcome.latencyMs),
      ok[0].d.endpoint_id,
    ],
  );
  for (const a of ok) results.set(a.d.id, 'succeeded');
}

/**
 * The failed attempts of a batch: each delivery retries on the schedule (a redelivery does not),
 * the endpoint's failure clock starts, and past 3 days of failures (unless something in the same
 * batch succeeded) or at a 410 the endpoint is disabled. Returns whether it was.
 */
async function recordFailures(
  app: AppContext,
  trx: Knex.Transaction,
  failed: Attempted[],
  someSucceeded: boolean,
  results: Map<number, AttemptResult>,
): Promise<boolean> {
  const first = failed[0];
  const failingSince = first.d.failing_since ?? first.at;
  const gone = failed.some((a) => a.outcome.status === 410);
  const disable = gone || (!someSucceeded && first.at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS);
  for (const { d, at, outcome: o } of failed) {
    const n = d.attempts + 1;
    await trx('webhook_delivery_attempts').insert({
      delivery_id: d.id,
      attempt: n,
      manual: d.manual,
      attempted_at: at,
      response_status: o.status,
      latency_ms: o.latencyMs,
      error: o.error,
    });
    const delay = d.manual || disable ? null : retryDelayMs(n, o.retryAfter);
    await trx('webhook_deliveries')
      .where({ id: d.id })
      .update({
        status: delay === null ? 'failed' : 'pending',
        attempts: n,
        last_attempt_at: at,
        response_status: o.status,
        latency_ms: o.latencyMs,
        error: o.error,
        next_attempt_at: delay === null ? null : new Date(at.getTime() + delay),
        lease_until: null,
        manual: false,
      });
    results.set(d.id, delay === null ? 'failed' : 'retrying');
  }
  if (disable) {
    await disableEndpoint(app, trx, first.d, gone ? 'gone' : 'failing', failingSince, first.at);
  } else if (!first.d.failing_since) {
    await trx('webhook_endpoints').where({ id: first.d.endpoint_id }).update({ failing_since: failingSince });
  }
  return disable;
}

/** Disables the endpoint, fails its waiting deliveries and tells the organization's other endpoints. */
async function disableEndpoint(
  app: AppContext,
  trx: Knex.Transaction,
  d: Leased,
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

/** Queues the endpoint's job for its earliest pending delivery (after any lease in flight). */
async function scheduleNext(app: AppContext, endpointId: number): Promise<void> {
  const row = await app
    .db('webhook_deliveries')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .first<{ next: Date | null }>(
      app.db.raw('min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at))) as next'),
    );
  if (!row?.next) return;
  const now = app.clock.now();
  await enqueueEndpoint(app.db, endpointId, row.next > now ? row.next : undefined);
}

/**
 * Queues again every endpoint with a due delivery that should have been tried a while ago and has
 * no attempt in flight: its job was lost with a killed worker (whose lock graphile-worker keeps for
 * hours). Returns how many endpoints.
 */
export async function sweepDeliveries(app: AppContext, now = app.clock.now()): Promise<number> {
  const endpoints = await app
    .db('webhook_deliveries')
    .where({ status: 'pending' })
    .where('next_attempt_at', '<=', new Date(now.getTime() - SWEEP_AFTER_MS))
    .where((q) => q.whereNull('lease_until').orWhere('lease_until', '<', now))
    .distinct()
    .pluck('endpoint_id');
  for (const id of endpoints) await enqueueEndpoint(app.db, id);
  return endpoints.length;
}

/** Events (with their deliveries and attempts) older than this are deleted by webhook-log-prune. */
const LOG_RETENTION_DAYS = 30;

export async function pruneDeliveryLog(app: AppContext, now = app.clock.now()): Promise<number> {
  return app
    .db('webhook_events')
    .where('created_at', '<', new Date(now.getTime() - LOG_RETENTION_DAYS * 86_400_000))
    .delete();
}
