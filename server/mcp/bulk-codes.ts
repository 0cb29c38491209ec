// MCP-only operations: codes_bulk_create and codes_bulk_update_status. They are not REST
// endpoints (not in server/operations.ts); they call the QR-code service.
import type { Operation } from '../http/operation.js';

export const mcpOnlyOperations: readonly Operation[] = [];
