// Routes mounted on the API listener beside the /v1 operations: the MCP endpoint, its OAuth
// authorization server and the dashboard.
import type { RouteMounter } from './http-common/respond.js';
import { mountMcp } from './mcp/route.js';
import { mountOAuth } from './web/oauth.js';
import { mountDashboard } from './web/mount.js';

export const apiMounts: RouteMounter[] = [mountMcp, mountOAuth, mountDashboard];
