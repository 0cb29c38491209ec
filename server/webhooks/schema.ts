import { dateTime, nullableDateTime, objectSchema, ulid } from '../schemas/common.js';
import { HTTP_URL_PATTERN, MAX_URL_LENGTH } from '../schemas/http-url.js';
import { pageQueryProperties, type PageQuery } from '../schemas/paging.js';
import type { JsonSchema } from '../schemas/validation.js';
import { EVENT_TYPES, type EventType } from './events.js';

/** Endpoints one organization may have. */
export const MAX_ENDPOINTS = 20;

export const Webhook: JsonSchema = {
  $id: 'Webhook',
  type: 'object',
  required: ['ulid', 'url', 'events', 'enabled', 'disabled_reason'],
  properties: {
    ulid: { type: 'string' },
    url: { type: 'string', format: 'uri' },
    description: { type: ['string', 'null'] },
    events: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
    enabled: { type: 'boolean' },
    disabled_reason: {
      type: ['string', 'null'],
      enum: ['failing', 'gone', null],
      description:
        'Why the service disabled the endpoint: failing (every attempt failed for 3 days) or gone (it answered 410). null when enabled or disabled by a user.',
    },
    disabled_at: nullableDateTime,
    failing_since: {
      ...nullableDateTime,
      description: 'The first failed attempt since the last success; null when the last attempt succeeded.',
    },
    previous_secret_expires_at: {
      ...nullableDateTime,
      description: 'Until then deliveries are also signed with the secret before the last rotation.',
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
};

const eventsField: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  items: { type: 'string', enum: [...EVENT_TYPES] },
  description: 'The event types to deliver (webhook.disabled notices come to every enabled endpoint anyway).',
};

const fields: Record<string, JsonSchema> = {
  url: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_URL_LENGTH,
    pattern: HTTP_URL_PATTERN,
    description: 'The http or https URL deliveries are POSTed to (https recommended).',
  },
  events: eventsField,
  enabled: { type: 'boolean', description: 'false pauses deliveries; true re-enables a disabled endpoint.' },
  description: { type: ['string', 'null'], maxLength: 255 },
};

export const createWebhookBody = objectSchema('webhooks.create.body', fields, ['url', 'events']);
export const updateWebhookBody = objectSchema('webhooks.update.body', fields);

export interface WebhookInput {
  url?: string;
  events?: EventType[];
  enabled?: boolean;
  description?: string | null;
}
export type CreateWebhookBody = WebhookInput & { url: string; events: EventType[] };

export const webhookParams = objectSchema('webhooks.params', { webhook_ulid: ulid }, ['webhook_ulid']);
export interface WebhookParams {
  webhook_ulid: string;
}

export const deliveryParams = objectSchema('webhooks.delivery.params', { webhook_ulid: ulid, delivery_ulid: ulid }, [
  'webhook_ulid',
  'delivery_ulid',
]);
export interface DeliveryParams extends WebhookParams {
  delivery_ulid: string;
}

export const listWebhooksQuery = objectSchema('webhooks.list.query', { ...pageQueryProperties });

export const DELIVERY_PAGE = 100;
export const listDeliveriesQuery = objectSchema('webhooks.deliveries.query', {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: DELIVERY_PAGE,
    description: `Page size, 1 to ${DELIVERY_PAGE} (default 25).`,
  },
  cursor: pageQueryProperties.cursor,
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'], description: 'Only deliveries in this state.' },
});
export interface ListDeliveriesQuery extends PageQuery {
  status?: 'pending' | 'succeeded' | 'failed';
}

/** The secret, shown once: at creation and at each rotation. */
export const WebhookWithSecret: JsonSchema = {
  type: 'object',
  required: ['data', 'secret'],
  properties: {
    data: Webhook,
    secret: {
      type: 'string',
      pattern: '^whsec_[A-Za-z0-9+/]+=*$',
      description: 'The signing secret (Standard Webhooks whsec_<base64>); shown only here.',
    },
  },
};

const Attempt: JsonSchema = {
  type: 'object',
  required: ['attempt', 'attempted_at', 'manual', 'response_status', 'latency_ms', 'error'],
  properties: {
    attempt: { type: 'integer', description: '1 for the first attempt.' },
    attempted_at: dateTime,
    manual: { type: 'boolean', description: 'Asked for with redeliver.' },
    response_status: { type: ['integer', 'null'] },
    latency_ms: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
  },
};

export const WebhookDelivery: JsonSchema = {
  $id: 'WebhookDelivery',
  type: 'object',
  required: ['ulid', 'event', 'status', 'attempts', 'log'],
  properties: {
    ulid: { type: 'string' },
    event: {
      type: 'object',
      required: ['id', 'type', 'created_at'],
      properties: {
        id: { type: 'string', description: 'The webhook-id header: msg_<ULID>, the same on every attempt.' },
        type: { type: 'string' },
        created_at: dateTime,
      },
    },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    attempts: { type: 'integer', description: 'Attempts made so far.' },
    response_status: { type: ['integer', 'null'], description: 'Of the last attempt.' },
    latency_ms: { type: ['integer', 'null'], description: 'Of the last attempt.' },
    error: { type: ['string', 'null'], description: 'Of the last attempt.' },
    next_attempt_at: { ...nullableDateTime, description: 'When the next retry runs (pending only).' },
    delivered_at: nullableDateTime,
    created_at: dateTime,
    log: { type: 'array', items: Attempt, description: 'Every attempt, oldest first.' },
  },
};
