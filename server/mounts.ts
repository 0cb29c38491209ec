// Routes mounted on the API listener beside the /v1 operations (the MCP endpoint).
import type { RouteMounter } from './http/api-app.js';
import { mountMcp } from './mcp/route.js';

export const apiMounts: RouteMounter[] = [mountMcp];
