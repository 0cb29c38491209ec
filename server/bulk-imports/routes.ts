import { csvResult, toCsv, wantsCsv } from '../operations/csv.js';
import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  BulkImport,
  confirmImportBody,
  ImportErrors,
  importParams,
  StagedImport,
  stageImportBody,
  type ImportParams,
  type StageImportInput,
} from './schema.js';
import { confirmImport, importErrors, readImport, stageImport } from './service.js';

// POST /v1/qr-codes/bulk
const bulkCreate = defineOperation<Record<string, never>, Record<string, never>, StageImportInput>({
  id: 'codes.bulk.create',
  method: 'POST',
  path: '/v1/qr-codes/bulk',
  summary: 'Stage a bulk import of QR codes for review',
  description:
    'Validates every row (URL, slug syntax, duplicates in the rows and against existing codes, ' +
    'ownership of domain, brand and style) and keeps the rows. Nothing is created until the import ' +
    'is confirmed with meta.confirm_token (valid 24 hours).',
  tag: 'Bulk import',
  ability: 'codes.create',
  billable: true,
  body: stageImportBody,
  response: { status: 201, description: 'The staged import and its confirm token.', schema: StagedImport },
  handler: async ({ app, principal, via }, { body }) => {
    const staged = await stageImport(app, principal.org, body, {
      tokenId: principal.token.id,
      source: via.name === 'rest' ? 'api' : via.name,
    });
    return { status: 201, body: { data: staged.data, meta: { confirm_token: staged.confirmToken } } };
  },
});

// GET /v1/qr-codes/bulk/{import_ulid}
const bulkRead = defineOperation<ImportParams>({
  id: 'codes.bulk.read',
  method: 'GET',
  path: '/v1/qr-codes/bulk/{import_ulid}',
  summary: 'A bulk import: preview, validation errors and execution progress',
  tag: 'Bulk import',
  ability: 'codes.view',
  billable: true,
  params: importParams,
  response: { status: 200, description: 'The import.', schema: dataEnvelope(BulkImport) },
  errors: [404],
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: await readImport(app, principal.org, params.import_ulid) },
  }),
});

// POST /v1/qr-codes/bulk/{import_ulid}/confirm
const bulkConfirm = defineOperation<ImportParams, Record<string, never>, { confirm_token: string }>({
  id: 'codes.bulk.confirm',
  method: 'POST',
  path: '/v1/qr-codes/bulk/{import_ulid}/confirm',
  summary: 'Confirm a staged import; its codes are created in the background',
  description: 'A wrong or expired token is 422; an import already confirmed is 409.',
  tag: 'Bulk import',
  ability: 'codes.create',
  billable: true,
  params: importParams,
  body: confirmImportBody,
  response: { status: 202, description: 'The import, queued.', schema: dataEnvelope(BulkImport) },
  errors: [404, 409],
  handler: async ({ app, principal }, { params, body }) => ({
    status: 202,
    body: { data: await confirmImport(app, principal.org, params.import_ulid, body.confirm_token) },
  }),
});

// GET /v1/qr-codes/bulk/{import_ulid}/errors
const bulkErrors = defineOperation<ImportParams>({
  id: 'codes.bulk.errors',
  method: 'GET',
  path: '/v1/qr-codes/bulk/{import_ulid}/errors',
  summary: 'Every row error of a bulk import (staging and execution); Accept: text/csv returns a CSV file',
  tag: 'Bulk import',
  ability: 'codes.view',
  billable: true,
  params: importParams,
  response: {
    status: 200,
    description: 'Row errors in row order, or the error report as CSV (row, field, message).',
    schema: ImportErrors,
    csv: true,
  },
  errors: [404],
  handler: async ({ app, principal, accept }, { params }) => {
    const errors = await importErrors(app, principal.org, params.import_ulid);
    if (wantsCsv(accept)) {
      return csvResult(
        `import-${params.import_ulid.toUpperCase()}-errors.csv`,
        toCsv(errors, ['row', 'field', 'message']),
      );
    }
    return { status: 200, body: { data: errors } };
  },
});

export const bulkImportOperations = [bulkCreate, bulkRead, bulkConfirm, bulkErrors];
