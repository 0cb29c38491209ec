// The catalog of MCP tools: every tool the service registers, in tools/list order, with the
// operation it runs, its annotations and, for guarded tools, the preview of confirm-then-execute
// (computed by the QR-code service without changing anything).
import type { Call, Operation, OperationInput } from '../operations/operation.js';
import { previewCodesStatus, previewCreateCodes, previewDeleteCode } from '../qr-codes/service.js';
import { BOTS_LEFT_OUT } from '../analytics/schema.js';
import { ulid } from '../schemas/common.js';
import { INPUT_TYPES } from '../qr-codes/types.js';
import type { JsonSchema } from '../schemas/validation.js';
import type { BulkCreateBody, BulkStatusBody } from '../qr-codes/bulk-operations.js';
import { codeImageDescription, type CodeImagePayload } from '../qr-codes/image-tool.js';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
}

export interface PreviewContext {
  call: Call;
  /** The validated input of the operation. */
  input: OperationInput;
}

export interface Guard {
  /** Whether these arguments need confirmation (codes_bulk_create: more than 10 rows). */
  applies(args: Record<string, unknown>): boolean;
  /** What would happen, computed without changing anything. */
  preview(ctx: PreviewContext): Promise<unknown>;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  operationId: string;
  annotations: ToolAnnotations;
  /** Property schemas that replace the generated ones (destination as a string URL). */
  inputOverrides?: Record<string, JsonSchema>;
  guard?: Guard;
  /** The text payload when the operation answers without a body (204). */
  emptyPayload?(args: Record<string, unknown>): unknown;
  /** The result's schema when the operation's response schema is not it (no body, or an image). */
  outputSchema?: JsonSchema;
  /**
   * The result when it is not the payload as JSON text and structuredContent (codes_image: the
   * image as image content and its description as structuredContent).
   */
  result?(payload: unknown): { content: ToolContent[]; structuredContent: Record<string, unknown> };
}

/** MCP content items a tool result carries. */
export type ToolContent = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

export interface Tool {
  def: ToolDef;
  op: Operation;
  inputSchema: JsonSchema;
  /** The result's schema (tool-schema.ts buildOutputSchema). */
  outputSchema: JsonSchema;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true };

export const BULK_CONFIRM_ABOVE = 10;
/** Previews list at most this many codes (count says how many there are). */
const PREVIEW_LIST = 50;

const confirmNote =
  ' Guarded: the first call returns {requires_confirmation, confirmation_id, preview} and changes nothing; call again with the same arguments plus confirm: true and the confirmation_id (valid 300 seconds, single use) to execute.';

/** Every tool the service registers, in tools/list order. */
export const TOOL_DEFS: readonly ToolDef[] = [
  {
    name: 'status_read',
    title: 'Service status',
    description:
      'Service status, the organization, its plan, API calls used this month and the calling token. Not billed.',
    operationId: 'status.read',
    annotations: READ,
  },
  {
    name: 'organization_read',
    title: 'Read the organization',
    description: 'The organization of the token: name, slug, locale, currency and plan.',
    operationId: 'organization.read',
    annotations: READ,
  },
  {
    name: 'wallet_read',
    title: 'Read the wallet',
    description: 'Wallet balance and a page of its ledger, newest first. Not billed.',
    operationId: 'wallet.read',
    annotations: READ,
  },
  {
    name: 'analytics_read',
    title: 'Scan analytics',
    description:
      'Scan totals, a daily time series and a breakdown by one dimension for the organization, a brand (brand_ulid) or a code (code_ulid) over the last 7, 30 or 90 days, with the conversions of the scope (count, unique visitors, amounts per currency; per brand and per code). ' +
      BOTS_LEFT_OUT,
    operationId: 'analytics.read',
    annotations: READ,
  },
  {
    name: 'analytics_export',
    title: 'Export scan analytics',
    description: `The analytics payload plus csv_rows ({date, <dimension>, scans}, and conversions with their amounts per currency). ${BOTS_LEFT_OUT}`,
    operationId: 'analytics.export',
    annotations: READ,
  },
  {
    name: 'analytics_code_read',
    title: 'Scan analytics of one code',
    description: `Scan analytics of one QR code from the daily rollup, with its conversions. ${BOTS_LEFT_OUT}`,
    operationId: 'analytics.code_read',
    annotations: READ,
  },
  {
    name: 'analytics_code_export',
    title: 'Raw scans of one code',
    description:
      'One page of the raw scans of a QR code in scan order (limit, offset or cursor); limited to 6 calls per minute on top of the organization limit. ' +
      BOTS_LEFT_OUT,
    operationId: 'analytics.code_export',
    annotations: READ,
  },
  {
    name: 'brands_list',
    title: 'List brands',
    description: 'The organization’s brands.',
    operationId: 'brands.list',
    annotations: READ,
  },
  {
    name: 'brands_read',
    title: 'Read a brand',
    description: 'One brand by brand_ulid.',
    operationId: 'brands.read',
    annotations: READ,
  },
  {
    name: 'brands_create',
    title: 'Create a brand',
    description: 'Creates a brand.',
    operationId: 'brands.create',
    annotations: CREATE,
  },
  {
    name: 'brands_update',
    title: 'Update a brand',
    description: 'Changes the given fields of a brand.',
    operationId: 'brands.update',
    annotations: UPDATE,
  },
  {
    name: 'domains_list',
    title: 'List domains',
    description: 'The shared fallback hosts and the organization’s custom domains.',
    operationId: 'domains.list',
    annotations: READ,
  },
  {
    name: 'domains_read',
    title: 'Read a domain',
    description: 'One domain by domain_ulid, with its verification records and certificate status.',
    operationId: 'domains.read',
    annotations: READ,
  },
  {
    name: 'domains_create',
    title: 'Add a custom domain',
    description:
      'Adds a pending custom domain and returns the DNS records that verify it; verify: true checks them at once.',
    operationId: 'domains.create',
    annotations: CREATE,
  },
  {
    name: 'domains_update',
    title: 'Update a domain',
    description: 'Verifies a domain’s DNS, queues a certificate renewal (refresh_ssl) or makes it the primary domain.',
    operationId: 'domains.update',
    annotations: UPDATE,
  },
  {
    name: 'codes_list',
    title: 'List QR codes',
    description: 'The organization’s QR codes.',
    operationId: 'codes.list',
    annotations: READ,
  },
  {
    name: 'codes_read',
    title: 'Read a QR code',
    description: 'One QR code by code_ulid.',
    operationId: 'codes.read',
    annotations: READ,
  },
  {
    name: 'codes_create',
    title: 'Create a QR code',
    description:
      'Creates a QR code. type (default redirect, the same as url) says what it carries: url redirects to destination (an http or https URL); vcard, links, app and event answer a hosted landing page built from the destination object and landing_config; wifi, text, email, sms, phone and geo are static (the QR holds the payload, not trackable). routing, schedule, redirect_cap and password depend on the plan.',
    operationId: 'codes.create',
    annotations: CREATE,
    inputOverrides: {
      type: {
        type: 'string',
        enum: [...INPUT_TYPES],
        default: 'redirect',
        description:
          '`redirect` (the default) and `url` are the same type; the others carry a destination object of their own.',
      },
    },
  },
  {
    name: 'codes_update',
    title: 'Update a QR code',
    description: 'Changes the given fields of a QR code (destination, status, name, routing, redirect_cap, ...).',
    operationId: 'codes.update',
    annotations: UPDATE,
  },
  {
    name: 'codes_delete',
    title: 'Delete a QR code',
    description: 'Deletes a QR code (soft delete: it stops redirecting and its slug becomes free).' + confirmNote,
    operationId: 'codes.delete',
    annotations: UPDATE,
    guard: {
      applies: () => true,
      preview: async ({ call, input }) => ({
        action: 'delete',
        code: await previewDeleteCode(call.app, call.principal.org, String(input.params.code_ulid)),
      }),
    },
    emptyPayload: (args) => ({ deleted: true, code_ulid: args.code_ulid }),
    outputSchema: {
      type: 'object',
      required: ['deleted', 'code_ulid'],
      additionalProperties: false,
      properties: { deleted: { type: 'boolean', const: true }, code_ulid: ulid },
    },
  },
  {
    name: 'codes_bulk_create',
    title: 'Create QR codes in bulk',
    description:
      `Creates up to 1,000 QR codes in one transaction, all or nothing; each row is validated like codes_create. Above ${BULK_CONFIRM_ABOVE} rows it is guarded.` +
      confirmNote,
    operationId: 'mcp.codes.bulk_create',
    annotations: CREATE,
    guard: {
      applies: (args) => Array.isArray(args.rows) && args.rows.length > BULK_CONFIRM_ABOVE,
      preview: async ({ call, input }) => {
        const rows = (input.body as unknown as BulkCreateBody).rows;
        // Validates every row exactly as the execution will (422 now rather than after confirming).
        const codes = await previewCreateCodes(call.app, call.principal.org, rows, { fieldPrefix: 'rows' });
        return {
          action: 'create',
          count: codes.length,
          codes: codes.slice(0, PREVIEW_LIST),
          truncated: codes.length > PREVIEW_LIST,
        };
      },
    },
  },
  {
    name: 'codes_bulk_update_status',
    title: 'Set the status of QR codes in bulk',
    description: 'Sets the status (active, paused, archived) of 1 to 1,000 QR codes given by code_ulids.' + confirmNote,
    operationId: 'mcp.codes.bulk_update_status',
    annotations: UPDATE,
    guard: {
      applies: () => true,
      preview: async ({ call, input }) => {
        const body = input.body as unknown as BulkStatusBody;
        const p = await previewCodesStatus(call.app, call.principal.org, body.code_ulids, body.status);
        return {
          action: 'update_status',
          status: p.status,
          count: p.codes.length,
          changing: p.changing,
          codes: p.codes.slice(0, PREVIEW_LIST),
          truncated: p.codes.length > PREVIEW_LIST,
        };
      },
    },
  },
  {
    name: 'codes_image',
    title: 'QR image of a code',
    description:
      'The QR code image of a code (it encodes the code’s public_url) as image content in the requested format (png, the default, or svg) and size (pixels, 64 to 4096, default 1024), described by structuredContent; style_ulid renders it with another style. Billed like GET /v1/qr-codes/{code_ulid}/image.',
    operationId: 'mcp.codes.image',
    annotations: READ,
    outputSchema: codeImageDescription,
    result: (payload) => {
      const { data, ...description } = payload as CodeImagePayload;
      return {
        content: [
          { type: 'image', data, mimeType: description.mime_type },
          { type: 'text', text: JSON.stringify(description) },
        ],
        structuredContent: description,
      };
    },
  },
  {
    name: 'styles_list',
    title: 'List QR styles',
    description: 'The organization’s QR style presets.',
    operationId: 'styles.list',
    annotations: READ,
  },
  {
    name: 'styles_create',
    title: 'Create a QR style',
    description: 'Creates a QR style preset.',
    operationId: 'styles.create',
    annotations: CREATE,
  },
];
