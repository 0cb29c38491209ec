// The 25 MCP tools. Each maps to one operation (server/operations.ts, or an MCP-only operation of
// bulk-codes.ts) and runs through executeOperation, so abilities, rate limit, metering and
// validation are REST's own. inputSchema is generated from the operation's params, query and body
// schemas. Guarded tools add the confirm-then-execute step of confirmations.ts.
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { executeOperation, type ExecuteMeta, type RawInput } from '../http/execute.js';
import type { Call, Operation, OperationInput } from '../http/operation.js';
import { previewCodesStatus, previewCreateCodes, previewDeleteCode } from '../qr-codes/service.js';
import type { JsonSchema } from '../schemas/validation.js';
import type { BulkCreateBody, BulkStatusBody } from './bulk-codes.js';
import { consumeConfirmation, issueConfirmation } from './confirmations.js';

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
}

export interface Tool {
  def: ToolDef;
  op: Operation;
  inputSchema: JsonSchema;
}

export interface CallToolResult {
  content: { type: 'text'; text: string }[];
  isError: boolean;
}

const READ: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const CREATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
const UPDATE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true };

const destinationUrl: JsonSchema = {
  type: 'string',
  format: 'uri',
  maxLength: 2048,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: 'The http or https URL the code redirects to.',
};

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
      'Scan totals, a daily time series and a breakdown by one dimension for the organization, a brand (brand_ulid) or a code (code_ulid) over the last 7, 30 or 90 days.',
    operationId: 'analytics.read',
    annotations: READ,
  },
  {
    name: 'analytics_export',
    title: 'Export scan analytics',
    description: 'The analytics payload plus csv_rows ({date, <dimension>, scans}).',
    operationId: 'analytics.export',
    annotations: READ,
  },
  {
    name: 'analytics_code_read',
    title: 'Scan analytics of one code',
    description: 'Scan analytics of one QR code from the daily rollup.',
    operationId: 'analytics.code_read',
    annotations: READ,
  },
  {
    name: 'analytics_code_export',
    title: 'Raw scans of one code',
    description:
      'One page of the raw scans of a QR code in scan order (limit, offset or cursor); limited to 6 calls per minute on top of the organization limit.',
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
      'Creates a dynamic QR code that redirects to destination (an http or https URL). routing, schedule, redirect_cap and password depend on the plan.',
    operationId: 'codes.create',
    annotations: CREATE,
    inputOverrides: {
      destination: destinationUrl,
      type: {
        type: 'string',
        enum: ['redirect', 'url'],
        default: 'redirect',
        description: '`redirect` (the default) and `url` are the same type.',
      },
    },
  },
  {
    name: 'codes_update',
    title: 'Update a QR code',
    description: 'Changes the given fields of a QR code (destination, status, name, routing, redirect_cap, ...).',
    operationId: 'codes.update',
    annotations: UPDATE,
    inputOverrides: { destination: destinationUrl },
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
        code: await previewDeleteCode(call.app, call.principal, String(input.params.code_ulid)),
      }),
    },
    emptyPayload: (args) => ({ deleted: true, code_ulid: args.code_ulid }),
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
        const codes = await previewCreateCodes(call.app, call.principal, rows, { fieldPrefix: 'rows' });
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
        const p = await previewCodesStatus(call.app, call.principal, body.code_ulids, body.status);
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
    name: 'codes_bulk_read',
    title: 'Read a bulk import',
    description: 'Status and counters of a REST bulk import by import_ulid.',
    operationId: 'codes.bulk.read',
    annotations: READ,
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

// ---------------------------------------------------------------------------------------------
// inputSchema generation

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A copy fit for a tool's inputSchema: no $id (tools are compiled side by side by clients),
 * `x-mcp` replaced by the schema it carries, and OpenAPI's `example` as JSON Schema `examples`.
 */
export function toToolSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toToolSchema);
  if (!isObject(value)) return value;
  if (isObject(value['x-mcp'])) return toToolSchema(value['x-mcp']);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$id' || k === '$schema' || k === 'x-mcp') continue;
    if (k === 'example') {
      if (!('examples' in value)) out.examples = [toToolSchema(v)];
      continue;
    }
    out[k] = toToolSchema(v);
  }
  return out;
}

interface Flat {
  properties: Record<string, JsonSchema>;
  required: string[];
}

/** Properties and required names of an object schema, following allOf. */
function flatten(schema: JsonSchema, where: string): Flat {
  const out: Flat = { properties: {}, required: [] };
  if (isObject(schema.properties)) Object.assign(out.properties, schema.properties);
  if (Array.isArray(schema.required)) out.required.push(...(schema.required as string[]));
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf as JsonSchema[]) {
      const f = flatten(part, where);
      Object.assign(out.properties, f.properties);
      out.required.push(...f.required);
    }
  }
  if (!Object.keys(out.properties).length && (schema.oneOf || schema.anyOf)) {
    throw new Error(`${where}: a tool input must be an object schema with properties`);
  }
  return out;
}

function partsOf(op: Operation): { part: 'params' | 'query' | 'body'; schema: JsonSchema }[] {
  const parts: { part: 'params' | 'query' | 'body'; schema: JsonSchema }[] = [];
  if (op.params) parts.push({ part: 'params', schema: op.params });
  if (op.query) parts.push({ part: 'query', schema: op.query });
  if (op.body) parts.push({ part: 'body', schema: op.body });
  return parts;
}

export function buildInputSchema(def: ToolDef, op: Operation): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  for (const { part, schema } of partsOf(op)) {
    const flat = flatten(schema, `${def.name} ${part}`);
    for (const [name, prop] of Object.entries(flat.properties)) {
      if (name in properties) throw new Error(`${def.name}: input ${name} appears in two parts of ${op.id}`);
      properties[name] = toToolSchema(def.inputOverrides?.[name] ?? prop);
    }
    flat.required.forEach((r) => required.add(r));
  }
  if (def.guard) {
    properties.confirm = { type: 'boolean', description: 'true executes a previewed call; needs confirmation_id.' };
    properties.confirmation_id = { type: 'string', description: 'The confirmation_id returned by the preview call.' };
  }
  return { type: 'object', properties, required: [...required], additionalProperties: false };
}

/** The tools whose operation exists, in TOOL_DEFS order; `missing` names the others. */
export function buildTools(ops: readonly Operation[]): { tools: Tool[]; missing: string[] } {
  const byId = new Map(ops.map((op) => [op.id, op]));
  const tools: Tool[] = [];
  const missing: string[] = [];
  for (const def of TOOL_DEFS) {
    const op = byId.get(def.operationId);
    if (!op) {
      missing.push(def.name);
      continue;
    }
    tools.push({ def, op, inputSchema: buildInputSchema(def, op) });
  }
  return { tools, missing };
}

/** The tools/list entry of a tool. */
export function describeTool(tool: Tool) {
  const needs = tool.op.ability
    ? `Needs the ${tool.op.ability} and mcp.access abilities.`
    : 'Any token with mcp.access on an API-enabled plan.';
  return {
    name: tool.def.name,
    title: tool.def.title,
    description: `${tool.def.description} ${needs}`,
    inputSchema: tool.inputSchema,
    annotations: { title: tool.def.title, ...tool.def.annotations },
  };
}

// ---------------------------------------------------------------------------------------------
// tools/call

/** Splits tool arguments into the operation's params, query and body; unknown names are 422. */
export function splitArguments(op: Operation, args: Record<string, unknown>): RawInput {
  const names = (schema: JsonSchema | undefined) =>
    new Set(schema ? Object.keys(flatten(schema, op.id).properties) : []);
  const paramNames = names(op.params);
  const queryNames = names(op.query);
  // Entries, then Object.fromEntries: a "__proto__" argument stays an own (and refused) key.
  const params: [string, unknown][] = [];
  const query: [string, unknown][] = [];
  const body: [string, unknown][] = [];
  const unknown: [string, string[]][] = [];
  for (const [k, v] of Object.entries(args)) {
    if (paramNames.has(k)) params.push([k, v]);
    else if (queryNames.has(k)) query.push([k, v]);
    else if (op.body) body.push([k, v]);
    else unknown.push([k, ['This field is not allowed.']]);
  }
  if (unknown.length) throw ApiError.validation(Object.fromEntries(unknown));
  // Path parameters are always required, as they are in the URL.
  const given = new Set(params.map(([k]) => k));
  for (const p of paramNames) {
    if (!given.has(p)) throw ApiError.field(p, 'This field is required.');
  }
  return {
    params: Object.fromEntries(params),
    query: Object.fromEntries(query),
    body: op.body ? Object.fromEntries(body) : undefined,
  };
}

export function textResult(payload: unknown, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], isError };
}

/**
 * Errors that answer the whole HTTP request exactly as REST would (status, headers, body) rather
 * than as a tool error: 401, 403 api_access, 429 and a token without mcp.access.
 */
export function isTransportError(err: ApiError): boolean {
  return (
    err.code === 'unauthenticated' ||
    err.code === 'api_access_disabled' ||
    err.code === 'rate_limited' ||
    (err.code === 'forbidden' && err.extra.required_ability === 'mcp.access')
  );
}

export interface CallOptions extends Omit<ExecuteMeta, 'via' | 'extraAbility' | 'accept'> {
  /** In a batch every failure, 429 included, is reported inside the tool result. */
  inBatch: boolean;
}

/** Runs one tools/call. Transport errors (see isTransportError) are thrown unless in a batch. */
export async function callTool(
  app: AppContext,
  principal: Principal,
  tool: Tool,
  args: Record<string, unknown>,
  opts: CallOptions,
): Promise<CallToolResult> {
  const meta: ExecuteMeta = {
    requestId: opts.requestId,
    log: opts.log,
    onRate: opts.onRate,
    accept: 'application/json',
    via: 'mcp',
    extraAbility: 'mcp.access',
  };
  try {
    const result = await executeOperation(
      app,
      principal,
      plan(app, principal, tool, args),
      () => prepare(tool, args),
      meta,
    );
    const payload =
      result.body === undefined || result.status === 204 ? (tool.def.emptyPayload?.(args) ?? {}) : result.body;
    return textResult(payload, false);
  } catch (err) {
    if (err instanceof ApiError) {
      if (isTransportError(err) && !opts.inBatch) throw err;
      return textResult(err.body(), true);
    }
    opts.log.error({ err, tool: tool.def.name }, 'tool failed');
    return textResult({ message: 'Internal server error.', code: 'internal', request_id: opts.requestId }, true);
  }
}

/** Arguments without the confirmation fields, which are not inputs of the operation. */
function operationArgs(tool: Tool, args: Record<string, unknown>): Record<string, unknown> {
  if (!tool.def.guard) return args;
  const rest = { ...args };
  delete rest.confirm;
  delete rest.confirmation_id;
  return rest;
}

async function prepare(tool: Tool, args: Record<string, unknown>): Promise<RawInput> {
  return splitArguments(tool.op, operationArgs(tool, args));
}

/**
 * The operation executeOperation runs for this call: the mapped one, or for a guarded call its
 * preview (admitted against the rate window but not billed) or its confirmed execution.
 */
function plan(app: AppContext, principal: Principal, tool: Tool, args: Record<string, unknown>): Operation {
  const guard = tool.def.guard;
  const opArgs = operationArgs(tool, args);
  if (!guard || !guard.applies(opArgs)) return tool.op;
  const name = tool.def.name;
  if (args.confirm !== true) {
    return {
      ...tool.op,
      billable: false,
      handler: async (call, input) => {
        const preview = await guard.preview({ call, input });
        const issued = await issueConfirmation(app, principal, name, opArgs);
        return { status: 200, body: { requires_confirmation: true, ...issued, preview } };
      },
    };
  }
  return {
    ...tool.op,
    handler: async (call, input) => {
      const id = args.confirmation_id;
      if (typeof id !== 'string' || id === '') {
        throw ApiError.field(
          'confirmation_id',
          'confirm: true needs the confirmation_id returned by the preview call.',
        );
      }
      await consumeConfirmation(app, principal, name, id, opArgs);
      return tool.op.handler(call, input);
    },
  };
}
