import { API_VERSION, defineOperation } from '../operations/operation.js';
import { effectiveRateLimit } from '../metering/admission.js';
import {
  Organization,
  PlanSummary,
  updateOrganizationBody,
  type OrganizationSettings,
} from '../organizations/schema.js';
import { readOrganization, updateOrganization } from '../organizations/service.js';
import { planSummary } from '../plans/plans.js';
import { dataEnvelope } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

const StatusPayload: JsonSchema = {
  $id: 'Status',
  type: 'object',
  required: ['status', 'version', 'organization', 'api', 'token'],
  properties: {
    status: { type: 'string', enum: ['ok'] },
    version: { type: 'string' },
    organization: {
      type: 'object',
      required: ['ulid', 'name', 'slug'],
      properties: { ulid: { type: 'string' }, name: { type: 'string' }, slug: { type: 'string' } },
    },
    plan: { oneOf: [PlanSummary, { type: 'null' }] },
    api: {
      type: 'object',
      required: ['rate_limit_per_min', 'calls_included_month', 'calls_used_month'],
      properties: {
        rate_limit_per_min: { type: 'integer' },
        calls_included_month: { type: 'integer', description: '-1 means unlimited (Enterprise).' },
        calls_used_month: { type: 'integer' },
      },
    },
    token: {
      type: 'object',
      required: ['name', 'abilities'],
      properties: { name: { type: 'string' }, abilities: { type: 'array', items: { type: 'string' } } },
    },
  },
};

// GET /v1/status
const statusRead = defineOperation({
  id: 'status.read',
  method: 'GET',
  path: '/v1/status',
  summary: 'Service status, plan, API usage this month and the token',
  tag: 'Status',
  ability: null,
  billable: false,
  response: { status: 200, description: 'The status payload (no data envelope).', schema: StatusPayload },
  jsonRead: true,
  handler: async ({ app, principal, admission }) => {
    const included = principal.org.plan?.callsIncludedMonth;
    return {
      status: 200,
      body: {
        status: 'ok',
        version: API_VERSION,
        organization: { ulid: principal.org.ulid, name: principal.org.name, slug: principal.org.slug },
        plan: planSummary(principal.org.plan),
        api: {
          rate_limit_per_min: effectiveRateLimit(app.config, principal.org),
          calls_included_month: included === null || included === undefined ? -1 : included,
          calls_used_month: admission.callsUsedMonth,
        },
        token: { name: principal.token.name, abilities: principal.token.abilities },
      },
    };
  },
});

// GET /v1/organization
const organizationRead = defineOperation({
  id: 'organization.read',
  method: 'GET',
  path: '/v1/organization',
  summary: 'The organization of the token',
  tag: 'Status',
  ability: null,
  billable: true,
  response: { status: 200, description: 'The organization.', schema: dataEnvelope(Organization) },
  jsonRead: true,
  handler: async ({ principal }) => ({
    status: 200,
    body: { data: readOrganization(principal.org) },
  }),
});

// PATCH /v1/organization
const organizationUpdate = defineOperation<Record<string, never>, Record<string, never>, OrganizationSettings>({
  id: 'organization.update',
  method: 'PATCH',
  path: '/v1/organization',
  summary: 'Change the organization’s settings (pixel_consent)',
  tag: 'Status',
  ability: 'organization.manage',
  billable: true,
  body: updateOrganizationBody,
  response: { status: 200, description: 'The organization after the change.', schema: dataEnvelope(Organization) },
  handler: async ({ app, principal }, { body }) => ({
    status: 200,
    body: { data: await updateOrganization(app, principal.org, body) },
  }),
});

export const statusOperations = [statusRead, organizationRead, organizationUpdate];
