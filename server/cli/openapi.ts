// Prints the OpenAPI 3.1 document (for `make openapi` and the lint), from the same operations
// the service serves.
import { loadConfig, apiBaseUrl } from '../config.js';
import { buildOpenApi } from '../operations/openapi.js';
import { operations } from '../all-operations.js';

process.stdout.write(JSON.stringify(buildOpenApi(operations, apiBaseUrl(loadConfig())), null, 2) + '\n');
