// The dashboard on the API listener: its JSON endpoints under /app/api and the built front end
// under /app.
import type { RouteMounter } from '../http-common/respond.js';
import { dashboardOnlyOperations, operations } from '../all-operations.js';
import { compileOperationSchemas } from '../operations/execute.js';
import { mountWebApi } from './api.js';
import { mountDashboardAssets } from './assets.js';

export const mountDashboard: RouteMounter = (router, app) => {
  const ops = [...operations, ...dashboardOnlyOperations];
  compileOperationSchemas(app.validators, dashboardOnlyOperations);
  mountWebApi(router, app, ops);
  mountDashboardAssets(router);
};
