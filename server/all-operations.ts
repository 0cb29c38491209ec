// Every operation of the service. The REST router, the MCP tools and the OpenAPI document are
// generated from this one list. It lives outside server/operations/ because it names every
// resource, and the resources depend on the runner, not the other way round.
import type { Operation } from './operations/operation.js';
import { analyticsOperations } from './analytics/routes.js';
import { brandOperations } from './brands/routes.js';
import { domainOperations } from './domains/routes.js';
import { bulkImportOperations } from './bulk-imports/routes.js';
import { codeOperations } from './qr-codes/routes.js';
import { styleOperations } from './qr-styles/routes.js';
import { statusOperations } from './status/routes.js';
import { tokenOperations } from './tokens/routes.js';
import { walletOperations } from './wallet/routes.js';

export const operations: readonly Operation[] = [
  ...statusOperations,
  ...walletOperations,
  ...tokenOperations,
  ...analyticsOperations,
  ...brandOperations,
  ...domainOperations,
  ...codeOperations,
  ...bulkImportOperations,
  ...styleOperations,
];
