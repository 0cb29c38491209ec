// The MCP tools: each maps to one operation (server/all-operations.ts: operations, or
// mcpOnlyOperations) and runs through executeOperation as a tool call (VIA_MCP), so abilities, rate
// limit, metering and validation are REST's own. The catalog is catalog.ts, inputSchema comes from
// tool-schema.ts, and guarded tools add the confirm-then-execute step of confirm.ts.
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { executeOperation, type ExecuteMeta } from '../operations/execute.js';
import { VIA_MCP, type Operation } from '../operations/operation.js';
import { TOOL_DEFS, type Tool, type ToolContent } from './catalog.js';
import { guardedOperation, isPreview, operationArgs } from './confirm.js';
import { buildInputSchema, buildOutputSchema, IDEMPOTENCY_ARG, splitArguments } from './tool-schema.js';
import { REPLAYED_HEADER } from '../operations/idempotency.js';

export interface CallToolResult {
  content: ToolContent[];
  /** The result as the tool's outputSchema describes it (absent on errors). */
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  /** idempotent_replayed: the stored answer of an earlier call with the same idempotency_key. */
  _meta?: Record<string, unknown>;
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
    tools.push({ def, op, inputSchema: buildInputSchema(def, op), outputSchema: buildOutputSchema(def, op) });
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
    outputSchema: tool.outputSchema,
    annotations: { title: tool.def.title, ...tool.def.annotations },
  };
}

// ---------------------------------------------------------------------------------------------
// tools/call

function textResult(payload: unknown, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload) }], isError };
}

function replayed(result: CallToolResult, headers: Record<string, string> | undefined): CallToolResult {
  return headers?.[REPLAYED_HEADER] ? { ...result, _meta: { idempotent_replayed: true } } : result;
}

/**
 * Errors that answer the whole HTTP request exactly as REST would (status, headers, body) rather
 * than as a tool error: 401, 403 api_access, 429 and a token without mcp.access.
 */
function isTransportError(err: ApiError): boolean {
  return (
    err.code === 'unauthenticated' ||
    err.code === 'api_access_disabled' ||
    err.code === 'rate_limited' ||
    (err.code === 'forbidden' && err.extra.required_ability === 'mcp.access')
  );
}

export interface CallOptions extends Omit<ExecuteMeta, 'via' | 'accept'> {
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
    via: VIA_MCP,
  };
  try {
    const key = args[IDEMPOTENCY_ARG];
    if (key !== undefined && typeof key !== 'string') throw ApiError.field(IDEMPOTENCY_ARG, 'Must be a string.');
    // A preview executes nothing: the key belongs to the confirmed call.
    if (key !== undefined && !isPreview(tool, args)) meta.idempotencyKey = key;
    const result = await executeOperation(
      app,
      principal,
      guardedOperation(app, principal, tool, args),
      async () => splitArguments(tool.op, operationArgs(tool, args)),
      meta,
    );
    const payload =
      result.body === undefined || result.status === 204 ? (tool.def.emptyPayload?.(args) ?? {}) : result.body;
    const answer: CallToolResult = tool.def.result
      ? { ...tool.def.result(payload), isError: false }
      : { ...textResult(payload, false), structuredContent: payload as Record<string, unknown> };
    return replayed(answer, result.headers);
  } catch (err) {
    if (err instanceof ApiError) {
      if (isTransportError(err) && !opts.inBatch) throw err;
      return replayed(textResult(err.body(), true), err.headers);
    }
    opts.log.error({ err, tool: tool.def.name }, 'tool failed');
    return textResult({ message: 'Internal server error.', code: 'internal', request_id: opts.requestId }, true);
  }
}
