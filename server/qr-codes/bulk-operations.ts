// MCP-only operations behind codes_bulk_create and codes_bulk_update_status. They are not REST
// endpoints (server/all-operations.ts lists them apart, in mcpOnlyOperations), but they run through
// executeOperation like every tool: codes.create / codes.update ability, one admitted and metered call each. The rules are the
// QR-code service's (server/qr-codes/service.ts): rows are validated like POST /v1/qr-codes and
// written in one transaction, all or nothing.
import { defineOperation } from '../operations/operation.js';
import { createCodes, updateCodesStatus } from './service.js';
import { CODE_STATUSES, createCodeBody, QrCode, type CodeStatus, type CodeWrite } from './schema.js';
import { listEnvelope, ulid } from '../schemas/common.js';
import type { JsonSchema } from '../schemas/validation.js';

export const BULK_MAX_ROWS = 1000;

/**
 * A row as tools/list shows it: codes_create's input, destination as a string URL. Without the
 * $id: ajv walks x-mcp too and must not see codes.create.body twice.
 */
const { $id: _createId, ...createRow } = createCodeBody;
const rowForTools: JsonSchema = createRow;

export interface BulkCreateBody {
  rows: CodeWrite[];
}

const bulkCreateBody: JsonSchema = {
  $id: 'mcp.codes.bulk_create.body',
  type: 'object',
  required: ['rows'],
  additionalProperties: false,
  properties: {
    rows: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_MAX_ROWS,
      // Rows are validated by the service, with codes_create's messages under rows.<i>.<field>;
      // tools/list shows the full row schema (x-mcp).
      items: { type: 'object', 'x-mcp': rowForTools },
      description: `1 to ${BULK_MAX_ROWS} codes, each with the inputs of codes_create.`,
    },
  },
};

// MCP tool codes_bulk_create
export const codesBulkCreateNow = defineOperation<Record<string, never>, Record<string, never>, BulkCreateBody>({
  id: 'mcp.codes.bulk_create',
  method: 'POST',
  path: '/mcp#codes_bulk_create',
  summary: 'Create up to 1,000 QR codes in one transaction, all or nothing',
  tag: 'MCP',
  ability: 'codes.create',
  billable: true,
  body: bulkCreateBody,
  response: { status: 201, description: 'The created codes, in row order.', schema: listEnvelope(QrCode) },
  handler: async ({ app, principal }, { body }) => ({
    status: 201,
    body: { data: await createCodes(app, principal.org, body.rows, { fieldPrefix: 'rows' }) },
  }),
});

export interface BulkStatusBody {
  code_ulids: string[];
  status: CodeStatus;
}

const bulkStatusBody: JsonSchema = {
  $id: 'mcp.codes.bulk_update_status.body',
  type: 'object',
  required: ['code_ulids', 'status'],
  additionalProperties: false,
  properties: {
    code_ulids: {
      type: 'array',
      minItems: 1,
      maxItems: BULK_MAX_ROWS,
      items: ulid,
      description: `1 to ${BULK_MAX_ROWS} code ULIDs.`,
    },
    status: { type: 'string', enum: [...CODE_STATUSES] },
  },
};

// MCP tool codes_bulk_update_status
export const codesBulkUpdateStatus = defineOperation<Record<string, never>, Record<string, never>, BulkStatusBody>({
  id: 'mcp.codes.bulk_update_status',
  method: 'POST',
  path: '/mcp#codes_bulk_update_status',
  summary: 'Set one status on 1 to 1,000 QR codes, all or nothing',
  tag: 'MCP',
  ability: 'codes.update',
  billable: true,
  body: bulkStatusBody,
  response: { status: 200, description: 'The updated codes.', schema: listEnvelope(QrCode) },
  handler: async ({ app, principal }, { body }) => ({
    status: 200,
    body: { data: await updateCodesStatus(app, principal.org, body.code_ulids, body.status) },
  }),
});
