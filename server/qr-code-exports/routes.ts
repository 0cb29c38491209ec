import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import { createExportBody, exportParams, QrCodeExport, type CreateExportInput, type ExportParams } from './schema.js';
import { createExport, openDownload, readExport } from './service.js';

// POST /v1/qr-codes/exports
const exportsCreate = defineOperation<Record<string, never>, Record<string, never>, CreateExportInput>({
  id: 'codes.exports.create',
  method: 'POST',
  path: '/v1/qr-codes/exports',
  summary: 'Start a print run: every selected code’s image in one ZIP, rendered in the background',
  description:
    'Exactly one of code_ulids, brand_ulid and bulk_import_ulid selects the codes (at most ' +
    'QR_EXPORT_MAX_CODES, default 10000, fewer for PNGs above 1024 px; more is 422). The selection is fixed now; poll ' +
    'GET /v1/qr-codes/exports/{export_ulid} and download the ZIP once status is completed. ' +
    'One metered call, whatever the number of codes.',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  body: createExportBody,
  response: { status: 202, description: 'The export, queued.', schema: dataEnvelope(QrCodeExport) },
  errors: [409],
  handler: async ({ app, principal, via }, { body }) => ({
    status: 202,
    body: {
      data: await createExport(app, principal.org, body, {
        tokenId: principal.token.id,
        source: via.name === 'rest' ? 'api' : via.name,
      }),
    },
  }),
});

// GET /v1/qr-codes/exports/{export_ulid}
const exportsRead = defineOperation<ExportParams>({
  id: 'codes.exports.read',
  method: 'GET',
  path: '/v1/qr-codes/exports/{export_ulid}',
  summary: 'A print run: status, total, done and progress_percent',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  params: exportParams,
  response: { status: 200, description: 'The export.', schema: dataEnvelope(QrCodeExport) },
  errors: [404],
  handler: async ({ app, principal }, { params }) => ({
    status: 200,
    body: { data: await readExport(app, principal.org, params.export_ulid) },
  }),
});

// GET /v1/qr-codes/exports/{export_ulid}/download
const exportsDownload = defineOperation<ExportParams>({
  id: 'codes.exports.download',
  method: 'GET',
  path: '/v1/qr-codes/exports/{export_ulid}/download',
  summary: 'The ZIP of a completed print run: one image per code and manifest.csv',
  description:
    'Streams the ZIP (application/zip). Before the export is completed, after it failed or once ' +
    'it has expired (QR_EXPORT_TTL_HOURS after completion, default 72) the answer is 409.',
  tag: 'QR codes',
  ability: 'codes.view',
  billable: true,
  params: exportParams,
  response: {
    status: 200,
    description: 'The ZIP file.',
    media: { 'application/zip': { type: 'string', contentMediaType: 'application/zip' } },
    headers: {
      'Content-Disposition': {
        description: '`attachment; filename="qr-codes-<export_ulid>.zip"`.',
        schema: { type: 'string' },
      },
    },
  },
  errors: [404, 409],
  handler: async ({ app, principal }, { params }) => {
    const zip = await openDownload(app, principal.org, params.export_ulid);
    return {
      status: 200,
      body: zip.body,
      contentType: 'application/zip',
      headers: {
        'Content-Disposition': `attachment; filename="${zip.fileName}"`,
        'Content-Length': String(zip.bytes),
      },
    };
  },
});

export const exportOperations = [exportsCreate, exportsRead, exportsDownload];
