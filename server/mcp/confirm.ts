// Confirm-then-execute for guarded tools: a first call runs the tool's preview and issues a
// confirmation (confirmations.ts); the call repeated with confirm: true and that confirmation_id
// consumes it and runs the operation.
import type { Principal } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import type { Operation } from '../operations/operation.js';
import { consumeConfirmation, issueConfirmation } from './confirmations.js';
import type { Tool } from './catalog.js';
import { IDEMPOTENCY_ARG } from './tool-schema.js';

/** Arguments without the confirmation fields and the idempotency key, which are not inputs of the operation. */
export function operationArgs(tool: Tool, args: Record<string, unknown>): Record<string, unknown> {
  const rest = { ...args };
  delete rest[IDEMPOTENCY_ARG];
  if (!tool.def.guard) return rest;
  delete rest.confirm;
  delete rest.confirmation_id;
  return rest;
}

/** Whether this call only previews a guarded tool (it executes nothing, so it takes no idempotency key). */
export function isPreview(tool: Tool, args: Record<string, unknown>): boolean {
  const guard = tool.def.guard;
  return !!guard && guard.applies(operationArgs(tool, args)) && args.confirm !== true;
}

/**
 * The operation executeOperation runs for this call: the mapped one, or for a guarded call its
 * preview (admitted against the rate window but not billed) or its confirmed execution.
 */
export function guardedOperation(
  app: AppContext,
  principal: Principal,
  tool: Tool,
  args: Record<string, unknown>,
): Operation {
  const guard = tool.def.guard;
  const opArgs = operationArgs(tool, args);
  if (!guard || !guard.applies(opArgs)) return tool.op;
  const name = tool.def.name;
  if (isPreview(tool, args)) {
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
