// Every operation of the service. The REST router, the MCP tools and the OpenAPI document are
// generated from this one list. It lives outside server/operations/ because it names every
// resource, and the resources depend on the runner, not the other way round.
import type { Operation } from './operations/operation.js';
import { analyticsOperations } from './analytics/routes.js';
import { brandOperations } from './brands/routes.js';
import { domainOperations } from './domains/routes.js';
import { bulkImportOperations } from './bulk-imports/routes.js';
import { importOperations } from './imports/routes.js';
import { codeOperations } from './qr-codes/routes.js';
import { codesBulkCreateNow, codesBulkUpdateStatus } from './qr-codes/bulk-operations.js';
import { codesImage, codesImagePreview } from './qr-codes/image-route.js';
import { gs1LinkTypes } from './qr-codes/gs1-routes.js';
import { codesImageTool } from './qr-codes/image-tool.js';
import { exportOperations } from './qr-code-exports/routes.js';
import { styleOperations } from './qr-styles/routes.js';
import { statusOperations } from './status/routes.js';
import { tokenOperations } from './tokens/routes.js';
import { walletOperations, walletSettingsUpdate } from './wallet/routes.js';
import { memberOperations } from './members/routes.js';
import { webhookOperations } from './webhooks/routes.js';
import { conversionOperations } from './conversions/routes.js';

export const operations: readonly Operation[] = [
  ...statusOperations,
  ...walletOperations,
  ...tokenOperations,
  ...analyticsOperations,
  ...brandOperations,
  ...domainOperations,
  ...codeOperations,
  codesImagePreview,
  codesImage,
  gs1LinkTypes,
  ...bulkImportOperations,
  ...importOperations,
  ...exportOperations,
  ...styleOperations,
  ...webhookOperations,
  ...conversionOperations,
];

/**
 * Operations of the dashboard only: members, invitations and the wallet's settings (billing writes
 * are not part of the API). The web adapter runs them beside every operation above; they are not
 * mounted on REST, offered as tools or documented in OpenAPI.
 */
export const dashboardOnlyOperations: readonly Operation[] = [...memberOperations, walletSettingsUpdate];

/**
 * Operations of the MCP tools only: the bulk writes (all or nothing) and the image as PNG and SVG
 * at once. The MCP adapter offers them beside every operation above; they are not mounted on REST
 * or documented in OpenAPI.
 */
export const mcpOnlyOperations: readonly Operation[] = [codesBulkCreateNow, codesBulkUpdateStatus, codesImageTool];
