import { defineOperation } from '../operations/operation.js';
import { listResult } from '../operations/list-result.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  CodeList,
  codeParams,
  createCodeBody,
  listCodesQuery,
  type ListCodesQuery,
  QrCode,
  updateCodeBody,
  type CodeParams,
  type CodeWrite,
} from './schema.js';
import { codeFilter, renderCode, createCodes, deleteCode, listCodeRows, readCode, updateCode } from './service.js';

// GET /v1/qr-codes
const codesList = defineOperation<Record<string, never>, ListCodesQuery>({
  id: 'codes.list',
  method: 'GET',
  path: '/v1/qr-codes',
  summary: 'Every QR code of the organization',
  description:
    'Without `limit` every code is returned, oldest first, streamed so that large organizations are ' +
    'served in flat memory. With `limit` (1 to 1000) a page is returned and meta.next_cursor leads to the next. ' +
    '`search`, `status`, `type`, `gtin`, `brand_ulid` and `domain_ulid` narrow the list and `order` orders it; the cursor ' +
    'keeps them only when they are sent again.',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  query: listCodesQuery,
  response: { status: 200, description: 'The codes.', schema: CodeList },
  errors: [404],
  handler: async (call, { query }) => {
    const filter = await codeFilter(call.app, call.principal.org, query);
    return listResult(call, query, {
      fetch: (after, n) => listCodeRows(call.app, call.principal.org, after, n, filter),
      id: (row) => row.id,
      render: renderCode,
    });
  },
});

// GET /v1/qr-codes/{code_ulid}
const codesRead = defineOperation<CodeParams>({
  id: 'codes.read',
  method: 'GET',
  path: '/v1/qr-codes/{code_ulid}',
  summary: 'One QR code',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  params: codeParams,
  response: { status: 200, description: 'The code.', schema: dataEnvelope(QrCode) },
  errors: [404],
  jsonRead: true,
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: await readCode(app, principal.org, params.code_ulid) },
  }),
});

// POST /v1/qr-codes
const codesCreate = defineOperation<Record<string, never>, Record<string, never>, CodeWrite>({
  id: 'codes.create',
  method: 'POST',
  path: '/v1/qr-codes',
  summary: 'Create a dynamic QR code on a domain',
  description:
    'The slug is stored as `<org-slug>/<slug>` and is unique in the organization, case-insensitively. ' +
    'redirect_cap, routing and schedule need the Business plan or higher, password the Professional plan ' +
    'or higher (403 feature_not_in_plan).',
  tag: 'QR codes',
  ability: 'codes.create',
  billable: true,
  body: createCodeBody,
  response: { status: 201, description: 'The created code.', schema: dataEnvelope(QrCode) },
  handler: async ({ app, principal }, { body }) => {
    const [code] = await createCodes(app, principal.org, [body]);
    return { status: 201, body: { data: code } };
  },
});

// PATCH /v1/qr-codes/{code_ulid}
const codesUpdate = defineOperation<CodeParams, Record<string, never>, CodeWrite>({
  id: 'codes.update',
  method: 'PATCH',
  path: '/v1/qr-codes/{code_ulid}',
  summary: 'Update a QR code; omitted keys stay unchanged',
  description: 'null clears a nullable key. Plan-gated keys with a value need the feature (403 feature_not_in_plan).',
  tag: 'QR codes',
  ability: 'codes.update',
  billable: true,
  params: codeParams,
  body: updateCodeBody,
  response: { status: 200, description: 'The updated code.', schema: dataEnvelope(QrCode) },
  errors: [404],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 200,
    body: { data: await updateCode(app, principal.org, params.code_ulid, body) },
  }),
});

// DELETE /v1/qr-codes/{code_ulid}
const codesDelete = defineOperation<CodeParams>({
  id: 'codes.delete',
  method: 'DELETE',
  path: '/v1/qr-codes/{code_ulid}',
  summary: 'Soft-delete a QR code; its slug can be reused',
  tag: 'QR codes',
  ability: 'codes.delete',
  billable: true,
  params: codeParams,
  response: { status: 204, description: 'Deleted.' },
  errors: [404],
  handler: async ({ app, principal }, { params }) => {
    await deleteCode(app, principal.org, params.code_ulid);
    return { status: 204 };
  },
});

export const codeOperations = [codesList, codesCreate, codesRead, codesUpdate, codesDelete];
