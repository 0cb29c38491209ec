import { listResult } from '../operations/list-result.js';
import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { pagedEnvelope, type PageQuery } from '../schemas/paging.js';
import {
  createWebhookBody,
  deliveryParams,
  listDeliveriesQuery,
  listWebhooksQuery,
  updateWebhookBody,
  Webhook,
  WebhookDelivery,
  webhookParams,
  WebhookWithSecret,
  type CreateWebhookBody,
  type DeliveryParams,
  type ListDeliveriesQuery,
  type WebhookInput,
  type WebhookParams,
} from './schema.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhookRow,
  listDeliveries,
  listWebhooksPage,
  redeliver,
  renderWebhook,
  rotateWebhookSecret,
  updateWebhook,
} from './service.js';

const TAG = 'Webhooks';

// GET /v1/webhooks
const webhooksList = defineOperation<Record<string, never>, PageQuery>({
  id: 'webhooks.list',
  method: 'GET',
  path: '/v1/webhooks',
  summary: 'The webhook endpoints of the organization',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  query: listWebhooksQuery,
  response: { status: 200, description: 'The endpoints, oldest first.', schema: pagedEnvelope(Webhook) },
  handler: async (call, { query }) =>
    listResult(call, query, {
      fetch: (after, n) => listWebhooksPage(call.app.db, call.principal.org, after, n),
      id: (row) => row.id,
      render: (row) => renderWebhook(row, call.app.clock.now()),
    }),
});

// POST /v1/webhooks
const webhooksCreate = defineOperation<Record<string, never>, Record<string, never>, CreateWebhookBody>({
  id: 'webhooks.create',
  method: 'POST',
  path: '/v1/webhooks',
  summary: 'Add a webhook endpoint; its signing secret is shown once',
  description:
    'Deliveries are signed per the Standard Webhooks specification with the returned `secret`. At most 20 endpoints per organization (409).',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  body: createWebhookBody,
  response: { status: 201, description: 'The endpoint and its secret.', schema: WebhookWithSecret },
  errors: [409],
  handler: async ({ app, principal }, { body }) => {
    const { row, secret } = await createWebhook(app, principal.org, body);
    return { status: 201, body: { data: renderWebhook(row), secret } };
  },
});

// GET /v1/webhooks/{webhook_ulid}
const webhooksRead = defineOperation<WebhookParams>({
  id: 'webhooks.read',
  method: 'GET',
  path: '/v1/webhooks/{webhook_ulid}',
  summary: 'One webhook endpoint',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: webhookParams,
  response: { status: 200, description: 'The endpoint.', schema: dataEnvelope(Webhook) },
  errors: [404],
  jsonRead: true,
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: renderWebhook(await getWebhookRow(app.db, principal.org, params.webhook_ulid), app.clock.now()) },
  }),
});

// PATCH /v1/webhooks/{webhook_ulid}
const webhooksUpdate = defineOperation<WebhookParams, Record<string, never>, WebhookInput>({
  id: 'webhooks.update',
  method: 'PATCH',
  path: '/v1/webhooks/{webhook_ulid}',
  summary: 'Change a webhook endpoint; omitted keys stay unchanged',
  description: '`enabled: true` re-enables an endpoint the service disabled and clears its failure state.',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: webhookParams,
  body: updateWebhookBody,
  response: { status: 200, description: 'The endpoint after the change.', schema: dataEnvelope(Webhook) },
  errors: [404],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 200,
    body: {
      data: renderWebhook(await updateWebhook(app, principal.org, params.webhook_ulid, body), app.clock.now()),
    },
  }),
});

// DELETE /v1/webhooks/{webhook_ulid}
const webhooksDelete = defineOperation<WebhookParams>({
  id: 'webhooks.delete',
  method: 'DELETE',
  path: '/v1/webhooks/{webhook_ulid}',
  summary: 'Delete a webhook endpoint and its delivery log',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: webhookParams,
  response: { status: 204, description: 'Deleted.' },
  errors: [404],
  handler: async ({ app, principal }, { params }) => {
    await deleteWebhook(app, principal.org, params.webhook_ulid);
    return { status: 204 };
  },
});

// POST /v1/webhooks/{webhook_ulid}/rotate-secret
const webhooksRotateSecret = defineOperation<WebhookParams>({
  id: 'webhooks.rotate_secret',
  method: 'POST',
  path: '/v1/webhooks/{webhook_ulid}/rotate-secret',
  summary: 'Replace the signing secret; the previous one keeps signing for 24 hours',
  description:
    'For 24 hours every delivery carries two signatures in webhook-signature, one per secret, so receivers can switch at their own pace.',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: webhookParams,
  response: { status: 200, description: 'The endpoint and its new secret.', schema: WebhookWithSecret },
  errors: [404],
  handler: async ({ app, principal }, { params }) => {
    const { row, secret } = await rotateWebhookSecret(app, principal.org, params.webhook_ulid);
    return { status: 200, body: { data: renderWebhook(row, app.clock.now()), secret } };
  },
});

// GET /v1/webhooks/{webhook_ulid}/deliveries
const webhooksDeliveries = defineOperation<WebhookParams, ListDeliveriesQuery>({
  id: 'webhooks.deliveries',
  method: 'GET',
  path: '/v1/webhooks/{webhook_ulid}/deliveries',
  summary: 'The delivery log of an endpoint, newest first',
  description: 'Each delivery with its status, last response and every attempt. Kept 30 days.',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: webhookParams,
  query: listDeliveriesQuery,
  response: { status: 200, description: 'A page of deliveries.', schema: pagedEnvelope(WebhookDelivery) },
  errors: [404],
  handler: async ({ app, principal }, { params, query }) => ({
    status: 200,
    body: await listDeliveries(app, principal.org, params.webhook_ulid, query),
  }),
});

// POST /v1/webhooks/{webhook_ulid}/deliveries/{delivery_ulid}/redeliver
const webhooksRedeliver = defineOperation<DeliveryParams>({
  id: 'webhooks.redeliver',
  method: 'POST',
  path: '/v1/webhooks/{webhook_ulid}/deliveries/{delivery_ulid}/redeliver',
  summary: 'Send a delivery again now (one attempt)',
  description: 'The same event with the same webhook-id. 409 while the endpoint is disabled.',
  tag: TAG,
  ability: 'webhooks.manage',
  billable: true,
  params: deliveryParams,
  response: { status: 202, description: 'The delivery, queued.', schema: dataEnvelope(WebhookDelivery) },
  errors: [404, 409],
  handler: async ({ app, principal }, { params }) => ({
    status: 202,
    body: { data: await redeliver(app, principal.org, params.webhook_ulid, params.delivery_ulid) },
  }),
});

export const webhookOperations = [
  webhooksList,
  webhooksCreate,
  webhooksRead,
  webhooksUpdate,
  webhooksDelete,
  webhooksRotateSecret,
  webhooksDeliveries,
  webhooksRedeliver,
];
