// Webhook endpoints of an organization: create (the signing secret is shown once), read, change,
// delete, rotate the secret (the previous one keeps signing for 24 hours), the delivery log and
// manual redelivery. Every function takes the organization first; REST calls them today, the
// dashboard can call them tomorrow.
import net from 'node:net';
import type { Knex } from 'knex';
import { ulid as newUlid } from 'ulid';
import type { OrgRecord } from '../auth/principal.js';
import { Sealer } from '../at-rest.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { enqueueJob } from '../jobs.js';
import { requireHttpUrl } from '../schemas/http-url.js';
import { decodeCursor, encodeCursor } from '../schemas/paging.js';
import { messageId, type EventType } from './events.js';
import { MAX_ENDPOINTS, type CreateWebhookBody, type ListDeliveriesQuery, type WebhookInput } from './schema.js';
import { newSigningSecret, secretPurpose } from './signing.js';
import { effectivePort, TargetPolicy } from './target.js';

export const DELIVER_TASK = 'webhook-deliver';
/** How long the previous secret keeps signing after a rotation. */
const ROTATION_OVERLAP_MS = 24 * 3600_000;

type Db = Knex | Knex.Transaction;

export interface WebhookRow {
  id: number;
  ulid: string;
  org_id: number;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  secret_enc: Buffer;
  previous_secret_enc: Buffer | null;
  previous_secret_expires_at: Date | null;
  disabled_reason: 'failing' | 'gone' | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WebhookOut {
  ulid: string;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  disabled_reason: 'failing' | 'gone' | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function renderWebhook(row: WebhookRow, now?: Date): WebhookOut {
  const overlap = row.previous_secret_expires_at;
  return {
    ulid: row.ulid,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at,
    failing_since: row.failing_since,
    previous_secret_expires_at: overlap && (!now || overlap > now) ? overlap : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/**
 * The URL rule: the service's one rule for http(s) URLs (server/schemas/http-url.ts), and a host
 * that is not a literal private, loopback or link-local address unless the operator allows it.
 * Host names are checked after DNS resolution at every delivery (server/webhooks/target.ts).
 */
function checkWebhookUrl(app: AppContext, value: string): string {
  const url = new URL(requireHttpUrl('url', value));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const policy = new TargetPolicy(app.config.webhookAllowedTargets);
  if (net.isIP(host) && !policy.allows(host, host, effectivePort(url))) {
    throw ApiError.field(
      'url',
      'Private, loopback and link-local addresses are not allowed (the operator can allow a target in WEBHOOK_ALLOWED_TARGETS).',
    );
  }
  // The fragment is never sent.
  url.hash = '';
  return url.href;
}

export function listWebhooksPage(db: Db, org: OrgRecord, afterId: number, n: number): Promise<WebhookRow[]> {
  return db('webhook_endpoints').where({ org_id: org.id }).where('id', '>', afterId).orderBy('id').limit(n);
}

export async function getWebhookRow(db: Db, org: OrgRecord, webhookUlid: string): Promise<WebhookRow> {
  const row = await db('webhook_endpoints')
    .where({ org_id: org.id, ulid: webhookUlid.toUpperCase() })
    .first<WebhookRow | undefined>();
  if (!row) throw ApiError.notFound('webhook');
  return row;
}

export async function createWebhook(
  app: AppContext,
  org: OrgRecord,
  input: CreateWebhookBody,
): Promise<{ row: WebhookRow; secret: string }> {
  const url = checkWebhookUrl(app, input.url);
  const secret = newSigningSecret();
  const now = app.clock.now();
  const row = await app.db.transaction(async (trx) => {
    // Serializes creations of one organization, so the limit holds under concurrency.
    await trx('organizations').where({ id: org.id }).forUpdate().first('id');
    const [{ count }] = await trx('webhook_endpoints')
      .where({ org_id: org.id })
      .count<{ count: string }[]>('* as count');
    if (Number(count) >= MAX_ENDPOINTS) {
      throw ApiError.conflict(`An organization has at most ${MAX_ENDPOINTS} webhook endpoints; delete one first.`);
    }
    const ulid = newUlid(now.getTime());
    const [created] = await trx('webhook_endpoints')
      .insert({
        ulid,
        org_id: org.id,
        url,
        description: input.description ?? null,
        events: input.events,
        enabled: input.enabled ?? true,
        secret_enc: new Sealer(app.secretKey).seal(secret, secretPurpose(ulid)),
        created_at: now,
        updated_at: now,
      })
      .returning<WebhookRow[]>('*');
    return created;
  });
  return { row, secret };
}

/** Omitted keys stay; enabling an endpoint the service disabled clears its failure state. */
export async function updateWebhook(
  app: AppContext,
  org: OrgRecord,
  webhookUlid: string,
  patch: WebhookInput,
): Promise<WebhookRow> {
  const current = await getWebhookRow(app.db, org, webhookUlid);
  const now = app.clock.now();
  const changes: Partial<Record<keyof WebhookRow, unknown>> = { updated_at: now };
  if (patch.url !== undefined) changes.url = checkWebhookUrl(app, patch.url);
  if (patch.events !== undefined) changes.events = patch.events;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.enabled !== undefined) {
    changes.enabled = patch.enabled;
    changes.disabled_reason = null;
    changes.disabled_at = patch.enabled ? null : now;
    if (patch.enabled) changes.failing_since = null;
  }
  const [row] = await app
    .db('webhook_endpoints')
    .where({ id: current.id, org_id: org.id })
    .update(changes)
    .returning<WebhookRow[]>('*');
  return row;
}

/** Deletes the endpoint with its delivery log. */
export async function deleteWebhook(app: AppContext, org: OrgRecord, webhookUlid: string): Promise<void> {
  const row = await getWebhookRow(app.db, org, webhookUlid);
  await app.db('webhook_endpoints').where({ id: row.id, org_id: org.id }).delete();
}

/** A new secret; the current one keeps signing for 24 hours (a second rotation drops the older one). */
export async function rotateWebhookSecret(
  app: AppContext,
  org: OrgRecord,
  webhookUlid: string,
): Promise<{ row: WebhookRow; secret: string }> {
  const current = await getWebhookRow(app.db, org, webhookUlid);
  const secret = newSigningSecret();
  const now = app.clock.now();
  const [row] = await app
    .db('webhook_endpoints')
    .where({ id: current.id, org_id: org.id })
    .update({
      previous_secret_enc: app.db.ref('secret_enc'),
      previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
      secret_enc: new Sealer(app.secretKey).seal(secret, secretPurpose(current.ulid)),
      updated_at: now,
    })
    .returning<WebhookRow[]>('*');
  return { row, secret };
}

// ---------------------------------------------------------------------------------------------
// The delivery log.

interface DeliveryRow {
  id: number;
  ulid: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  response_status: number | null;
  latency_ms: number | null;
  error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  event_ulid: string;
  event_type: string;
  event_created_at: Date;
}

interface AttemptRow {
  delivery_id: number;
  attempt: number;
  attempted_at: Date;
  manual: boolean;
  response_status: number | null;
  latency_ms: number | null;
  error: string | null;
}

function renderDelivery(d: DeliveryRow, attempts: AttemptRow[]) {
  return {
    ulid: d.ulid,
    event: { id: messageId(d.event_ulid), type: d.event_type, created_at: d.event_created_at },
    status: d.status,
    attempts: d.attempts,
    response_status: d.response_status,
    latency_ms: d.latency_ms,
    error: d.error,
    next_attempt_at: d.status === 'pending' ? d.next_attempt_at : null,
    delivered_at: d.delivered_at,
    created_at: d.created_at,
    log: attempts.map((a) => ({
      attempt: a.attempt,
      attempted_at: a.attempted_at,
      manual: a.manual,
      response_status: a.response_status,
      latency_ms: a.latency_ms,
      error: a.error,
    })),
  };
}

function deliveries(db: Db, org: OrgRecord, endpointId: number): Knex.QueryBuilder {
  return db('webhook_deliveries as d')
    .join('webhook_events as e', 'e.id', 'd.event_id')
    .where({ 'd.org_id': org.id, 'd.endpoint_id': endpointId })
    .select('d.*', 'e.ulid as event_ulid', 'e.type as event_type', 'e.created_at as event_created_at');
}

async function withAttempts(db: Db, rows: DeliveryRow[]) {
  const attempts = (await db('webhook_delivery_attempts')
    .whereIn(
      'delivery_id',
      rows.map((r) => r.id),
    )
    .orderBy('id')) as AttemptRow[];
  return rows.map((r) =>
    renderDelivery(
      r,
      attempts.filter((a) => Number(a.delivery_id) === Number(r.id)),
    ),
  );
}

/** Deliveries of an endpoint, newest first, with every attempt. */
export async function listDeliveries(app: AppContext, org: OrgRecord, webhookUlid: string, query: ListDeliveriesQuery) {
  const endpoint = await getWebhookRow(app.db, org, webhookUlid);
  const limit = query.limit ?? 25;
  const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
  const q = deliveries(app.db, org, endpoint.id)
    .orderBy('d.id', 'desc')
    .limit(limit + 1);
  if (before !== null) q.where('d.id', '<', before);
  if (query.status) q.where('d.status', query.status);
  const rows = (await q) as DeliveryRow[];
  const page = rows.slice(0, limit);
  return {
    data: await withAttempts(app.db, page),
    meta: { next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1].id) : null },
  };
}

/** Queues one attempt now, whatever the delivery's state; the endpoint must be enabled. */
export async function redeliver(app: AppContext, org: OrgRecord, webhookUlid: string, deliveryUlid: string) {
  const endpoint = await getWebhookRow(app.db, org, webhookUlid);
  if (!endpoint.enabled) throw ApiError.conflict('The endpoint is disabled; enable it before redelivering.');
  const now = app.clock.now();
  const row = await app.db.transaction(async (trx) => {
    const [updated] = await trx('webhook_deliveries')
      .where({ org_id: org.id, endpoint_id: endpoint.id, ulid: deliveryUlid.toUpperCase() })
      .update({ status: 'pending', next_attempt_at: now, manual: true })
      .returning<{ id: number }[]>('id');
    if (!updated) throw ApiError.notFound('delivery');
    await enqueueEndpoint(trx, endpoint.id);
    return (await deliveries(trx, org, endpoint.id).where('d.id', updated.id).first()) as DeliveryRow;
  });
  return (await withAttempts(app.db, [row]))[0];
}

/**
 * The endpoint's job, which drains its due deliveries (server/webhooks/delivery.ts); its key makes
 * a new request replace a waiting one, so an endpoint has one job at a time.
 */
export function enqueueEndpoint(db: Db, endpointId: number, runAt?: Date): Promise<void> {
  return enqueueJob(
    db,
    DELIVER_TASK,
    { webhook_id: Number(endpointId) },
    { jobKey: `webhook:${endpointId}`, runAt, maxAttempts: 5 },
  );
}
