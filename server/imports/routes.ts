import { listResult } from '../operations/list-result.js';
import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { pagedEnvelope, type PageQuery } from '../schemas/paging.js';
import {
  confirmBody,
  createImportBody,
  ImportOut,
  importParams,
  ImportReport,
  listImportsQuery,
  resumeBody,
  type CreateImportInput,
  type Credentials,
  type ImportParams,
} from './schema.js';
import {
  confirmImport,
  createImport,
  importReport,
  listImports,
  readImport,
  renderImport,
  resumeImport,
} from './service.js';

const Created = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: ImportOut,
    meta: {
      type: 'object',
      required: ['confirm_token'],
      properties: { confirm_token: { type: 'string', description: 'Valid 24 hours; shown once.' } },
    },
  },
};

// POST /v1/imports
const importsCreate = defineOperation<Record<string, never>, Record<string, never>, CreateImportInput>({
  id: 'imports.create',
  method: 'POST',
  path: '/v1/imports',
  summary: 'Start an import of links and their scan history from another link service',
  description:
    'Keeps the request (credentials and file sealed) and reads the source in the background into a ' +
    'preview: counts, the first 50 mappings, every slug clash and every field with no equivalent, the ' +
    'plan’s code limit. Nothing is created until the import is confirmed with meta.confirm_token.',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  body: createImportBody,
  response: { status: 202, description: 'The import, previewing, and its confirm token.', schema: Created },
  handler: async ({ app, principal }, { body }) => {
    const created = await createImport(app, principal.org, body, { tokenId: principal.token.id });
    return { status: 202, body: { data: created.data, meta: { confirm_token: created.confirmToken } } };
  },
});

// GET /v1/imports
const importsList = defineOperation<Record<string, never>, PageQuery>({
  id: 'imports.list',
  method: 'GET',
  path: '/v1/imports',
  summary: 'The organization’s imports, newest first, each with its status and progress',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  query: listImportsQuery,
  response: { status: 200, description: 'The imports, newest first.', schema: pagedEnvelope(ImportOut) },
  handler: async (call, { query }) =>
    listResult(call, query, {
      fetch: (before, n) => listImports(call.app, call.principal.org, before, n),
      id: (row) => row.id,
      render: (row) => renderImport(row, call.app.clock.now()),
    }),
});

// GET /v1/imports/{import_ulid}
const importsRead = defineOperation<ImportParams>({
  id: 'imports.read',
  method: 'GET',
  path: '/v1/imports/{import_ulid}',
  summary: 'An import: its preview, progress (links, scans, ETA) and outcome',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  params: importParams,
  response: { status: 200, description: 'The import.', schema: dataEnvelope(ImportOut) },
  errors: [404],
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: await readImport(app, principal.org, params.import_ulid) },
  }),
});

// GET /v1/imports/{import_ulid}/report
const importsReport = defineOperation<ImportParams>({
  id: 'imports.report',
  method: 'GET',
  path: '/v1/imports/{import_ulid}/report',
  summary: 'Every link of an import that could not keep its slug or domain, lost a field, was skipped or failed',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  params: importParams,
  response: { status: 200, description: 'The links with problems, in source order.', schema: ImportReport },
  errors: [404],
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: await importReport(app, principal.org, params.import_ulid) },
  }),
});

// POST /v1/imports/{import_ulid}/confirm
const importsConfirm = defineOperation<ImportParams, Record<string, never>, { confirm_token: string }>({
  id: 'imports.confirm',
  method: 'POST',
  path: '/v1/imports/{import_ulid}/confirm',
  summary: 'Confirm a previewed import; codes and scans are imported in the background',
  description:
    'A wrong or expired token is 422. 409 while the preview is not ready, when already confirmed, when ' +
    'on_clash is fail and slugs clash, or when the plan’s code limit would be exceeded.',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  params: importParams,
  body: confirmBody,
  response: { status: 202, description: 'The import, queued.', schema: dataEnvelope(ImportOut) },
  errors: [404, 409],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 202,
    body: { data: await confirmImport(app, principal.org, params.import_ulid, body.confirm_token) },
  }),
});

// POST /v1/imports/{import_ulid}/resume
const importsResume = defineOperation<ImportParams, Record<string, never>, { credentials?: Credentials }>({
  id: 'imports.resume',
  method: 'POST',
  path: '/v1/imports/{import_ulid}/resume',
  summary: 'Resume a failed import from where it stopped (its continue token)',
  description:
    'The credentials were wiped when it failed: an API source needs them again. 409 unless failed after confirm.',
  tag: 'Imports',
  ability: 'imports.manage',
  billable: true,
  params: importParams,
  body: resumeBody,
  response: { status: 202, description: 'The import, queued again.', schema: dataEnvelope(ImportOut) },
  errors: [404, 409],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 202,
    body: { data: await resumeImport(app, principal.org, params.import_ulid, body.credentials) },
  }),
});

export const importOperations = [importsList, importsCreate, importsRead, importsReport, importsConfirm, importsResume];
