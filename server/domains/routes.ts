import { defineOperation } from '../operations/operation.js';
import { listResult } from '../operations/list-result.js';
import { pagedEnvelope } from '../schemas/paging.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  createDomainBody,
  Domain,
  domainParams,
  listDomainsQuery,
  updateDomainBody,
  type CreateDomainBody,
  type DomainParams,
  type ListDomainsQuery,
  type UpdateDomainBody,
} from './schema.js';
import { createDomain, deleteDomain, getDomain, listDomainsPage, renderDomain, updateDomain } from './service.js';

// GET /v1/domains
const domainsList = defineOperation<Record<string, never>, ListDomainsQuery>({
  id: 'domains.list',
  method: 'GET',
  path: '/v1/domains',
  summary: 'The shared fallback hosts and the organization’s custom domains',
  description: 'Every domain in creation order, unless `limit` asks for pages.',
  tag: 'Domains',
  ability: 'domains.view',
  billable: true,
  query: listDomainsQuery,
  response: { status: 200, description: 'The domains.', schema: pagedEnvelope(Domain) },
  handler: async (call, { query }) =>
    listResult(call, query, {
      fetch: (after, n) => listDomainsPage(call.app.db, call.principal.org, after, n),
      id: (row) => row.id,
      render: renderDomain,
    }),
});

// GET /v1/domains/{domain_ulid}
const domainsRead = defineOperation<DomainParams>({
  id: 'domains.read',
  method: 'GET',
  path: '/v1/domains/{domain_ulid}',
  summary: 'One domain (a custom domain of the organization or a shared fallback host)',
  tag: 'Domains',
  ability: 'domains.view',
  billable: true,
  params: domainParams,
  response: { status: 200, description: 'The domain.', schema: dataEnvelope(Domain) },
  errors: [404],
  jsonRead: true,
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: renderDomain(await getDomain(app.db, principal.org, params.domain_ulid)) },
  }),
});

// POST /v1/domains
const domainsCreate = defineOperation<Record<string, never>, Record<string, never>, CreateDomainBody>({
  id: 'domains.create',
  method: 'POST',
  path: '/v1/domains',
  summary: 'Add a custom domain (pending until its TXT record is verified)',
  description:
    'Creates a pending claim on a custom domain. Publish the TXT record of `verification`, then verify ' +
    '(here with verify=true, or later with PATCH) before verification.claim_expires_at. A claim holds ' +
    'nothing: several organizations may claim one host, and the first to verify it gets it (the ' +
    'domain becomes active and its certificate is queued; the other claims become failed). A miss ' +
    'keeps the claim pending and verification.last_error says why.',
  tag: 'Domains',
  ability: 'domains.manage',
  billable: true,
  body: createDomainBody,
  response: { status: 201, description: 'The new domain.', schema: dataEnvelope(Domain) },
  handler: async ({ app, principal }, { body }) => ({
    status: 201,
    body: { data: renderDomain(await createDomain(app, principal.org, body)) },
  }),
});

// PATCH /v1/domains/{domain_ulid}
const domainsUpdate = defineOperation<DomainParams, Record<string, never>, UpdateDomainBody>({
  id: 'domains.update',
  method: 'PATCH',
  path: '/v1/domains/{domain_ulid}',
  summary: 'Verify ownership, refresh the certificate, set the primary domain or its redirect settings',
  tag: 'Domains',
  ability: 'domains.manage',
  billable: true,
  params: domainParams,
  body: updateDomainBody,
  response: { status: 200, description: 'The domain after the change.', schema: dataEnvelope(Domain) },
  errors: [404, 409],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 200,
    body: { data: renderDomain(await updateDomain(app, principal.org, params.domain_ulid, body)) },
  }),
});

// DELETE /v1/domains/{domain_ulid}
const domainsDelete = defineOperation<DomainParams>({
  id: 'domains.delete',
  method: 'DELETE',
  path: '/v1/domains/{domain_ulid}',
  summary: 'Soft-delete a custom domain no live QR code uses',
  description:
    'Deletes a custom domain of the organization (its host can be claimed again). Answers 409 ' +
    '`domain_in_use` while QR codes that are not deleted use it. Shared fallback hosts cannot be deleted.',
  tag: 'Domains',
  ability: 'domains.manage',
  billable: true,
  params: domainParams,
  response: { status: 204, description: 'Deleted.' },
  errors: [404, 409],
  handler: async ({ app, principal }, { params }) => {
    await deleteDomain(app, principal.org, params.domain_ulid);
    return { status: 204 };
  },
});

export const domainOperations = [domainsList, domainsRead, domainsCreate, domainsUpdate, domainsDelete];
