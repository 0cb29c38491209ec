// docs/limits.md states limits that live in code as constants, not in a schema: each must appear
// there as the code has it (the field table is checked by limits-doc.test.ts).
import fs from 'node:fs';
import { expect } from 'chai';
import { RAW_EXPORT_MAX_LIMIT } from '../../server/analytics/schema.js';
import { CONFIRM_TTL_MS, PREVIEW_ERRORS_SHOWN } from '../../server/bulk-imports/service.js';
import { BULK_IMPORT_ROWS_CEILING } from '../../server/config.js';
import { BULK_MAX_ROWS } from '../../server/qr-codes/bulk-operations.js';
import { CONFIRMATION_TTL_SECONDS } from '../../server/mcp/confirmations.js';
import { IDEMPOTENCY_TTL_MS } from '../../server/operations/idempotency.js';
import { DEFAULT_LOOKUPS_PER_SECOND } from '../../server/redirect/cache.js';
import { DEFAULT_ORPHANS_PER_SECOND } from '../../server/redirect/orphan-sampler.js';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_WINDOW_MS } from '../../server/redirect/password-throttle.js';
import { FORM_LIMIT_BYTES } from '../../server/redirect/password.js';
import { MAX_PAGE } from '../../server/schemas/paging.js';
import { DELIVERY_PAGE, MAX_ENDPOINTS } from '../../server/webhooks/schema.js';
import { DISABLE_AFTER_MS, RETRY_SCHEDULE_S } from '../../server/webhooks/delivery.js';

const n = (v: number) => v.toLocaleString('en-US');

describe('docs/limits.md states the limits kept in code', () => {
  const doc = fs.readFileSync('docs/limits.md', 'utf8').replace(/\s+/g, ' ');
  const cases: [string, string][] = [
    ['page size', `1 to ${n(MAX_PAGE)}; omitted`],
    ['webhook deliveries page', `| 1 to ${DELIVERY_PAGE} |`],
    ['raw export page', `1 to ${n(RAW_EXPORT_MAX_LIMIT)} (default`],
    ['password form', `password form posted to the redirect | ${n(FORM_LIMIT_BYTES)} bytes`],
    ['idempotency keys kept', `kept ${IDEMPOTENCY_TTL_MS / 3600_000} hours`],
    [
      'password guesses',
      `${DEFAULT_MAX_ATTEMPTS} per visitor address and code per ${DEFAULT_WINDOW_MS / 60_000} minutes`,
    ],
    ['filtered lookups', `${DEFAULT_LOOKUPS_PER_SECOND} lookups per second per process`],
    ['orphan rows', `at most ${DEFAULT_ORPHANS_PER_SECOND} orphan-scan rows per domain per second`],
    ['webhook endpoints', `| webhook endpoints per organization | ${MAX_ENDPOINTS} |`],
    ['webhook retries', `${RETRY_SCHEDULE_S.length} retries`],
    ['webhook disable', `failing for ${DISABLE_AFTER_MS / 86_400_000} days`],
    ['bulk ceiling', `raise it to ${n(BULK_IMPORT_ROWS_CEILING)}`],
    ['bulk confirmation', `await confirmation ${CONFIRM_TTL_MS / 3600_000} hours`],
    ['preview errors', `the first ${n(PREVIEW_ERRORS_SHOWN)}`],
    ['MCP bulk', `${n(BULK_MAX_ROWS)} rows or codes per call`],
    ['MCP confirmations', `valid ${CONFIRMATION_TTL_SECONDS} seconds`],
  ];
  for (const [what, text] of cases) {
    it(`states the ${what}`, () => expect(doc).to.include(text));
  }
});
