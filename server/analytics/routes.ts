import { csvResult, toCsv, wantsCsv } from '../operations/csv.js';
import { defineOperation } from '../operations/operation.js';
import { dataEnvelope } from '../schemas/common.js';
import {
  AnalyticsPayload,
  analyticsQuery,
  BOTS_NOTE,
  CodeAnalyticsPayload,
  codeAnalyticsQuery,
  codeParams,
  ConversionsExportPayload,
  conversionsExportQuery,
  rawExportQuery,
  RawExportPayload,
  scanStreamQuery,
  type AnalyticsQuery,
  type CodeAnalyticsQuery,
  type CodeParams,
  type ConversionsExportQuery,
  type RawExportQuery,
} from './schema.js';
import { openScanStream, type ScanStreamQuery } from './live.js';
import { CONVERSION_EXPORT_COLUMNS } from '../conversions/service.js';
import {
  codeAnalytics,
  conversionsExport,
  csvColumns,
  organizationAnalytics,
  RAW_EXPORT_COLUMNS,
  rawExport,
} from './service.js';

// GET /v1/analytics
export const analyticsRead = defineOperation<Record<string, never>, AnalyticsQuery>({
  id: 'analytics.read',
  method: 'GET',
  path: '/v1/analytics',
  summary: 'Scan analytics of the organization, a brand or a code',
  description:
    'Totals, a daily time series (every day of the range), a breakdown by one dimension and, for the ' +
    'organization and brand scopes, per brand or per code. Ranges are the last 7, 30 or 90 UTC days ' +
    `including today. ${BOTS_NOTE}`,
  tag: 'Analytics',
  ability: 'analytics.view',
  billable: true,
  query: analyticsQuery,
  response: { status: 200, description: 'The analytics payload.', schema: dataEnvelope(AnalyticsPayload) },
  errors: [404, 422],
  handler: async ({ app, principal }, { query }) => ({
    status: 200,
    body: { data: await organizationAnalytics(app, principal.org, query, { csvRows: false }) },
  }),
});

// GET /v1/analytics/export
export const analyticsExport = defineOperation<Record<string, never>, AnalyticsQuery>({
  id: 'analytics.export',
  method: 'GET',
  path: '/v1/analytics/export',
  summary: 'Scan analytics with csv_rows; Accept: text/csv returns them as a CSV file',
  description: `As GET /v1/analytics, with csv_rows. ${BOTS_NOTE}`,
  tag: 'Analytics',
  ability: 'analytics.export',
  billable: true,
  query: analyticsQuery,
  response: {
    status: 200,
    description: 'The analytics payload including csv_rows ({date, <dimension>, scans}), or those rows as CSV.',
    schema: dataEnvelope(AnalyticsPayload),
    csv: true,
  },
  errors: [404, 422],
  handler: async ({ app, principal, accept }, { query }) => {
    const data = await organizationAnalytics(app, principal.org, query, { csvRows: true });
    if (wantsCsv(accept)) {
      const rows = data.csv_rows ?? [];
      const csv = toCsv(rows, csvColumns(query.dimension, rows));
      return csvResult(`analytics-${data.scope_level}-${query.range}d-${query.dimension}.csv`, csv);
    }
    return { status: 200, body: { data } };
  },
});

// GET /v1/analytics/qr-codes/{code_ulid}
export const analyticsCodeRead = defineOperation<CodeParams, CodeAnalyticsQuery>({
  id: 'analytics.code_read',
  method: 'GET',
  path: '/v1/analytics/qr-codes/{code_ulid}',
  summary: 'Scan analytics of one QR code from the daily rollup',
  description: `Totals, a daily time series and a breakdown by one dimension of one code. ${BOTS_NOTE}`,
  tag: 'Analytics',
  ability: 'analytics.view',
  billable: true,
  params: codeParams,
  query: codeAnalyticsQuery,
  response: { status: 200, description: 'The per-code analytics payload.', schema: dataEnvelope(CodeAnalyticsPayload) },
  errors: [404, 422],
  handler: async ({ app, principal }, { params, query }) => ({
    status: 200,
    body: { data: await codeAnalytics(app, principal.org, params.code_ulid, query) },
  }),
});

// GET /v1/analytics/qr-codes/{code_ulid}/raw-export
export const analyticsCodeExport = defineOperation<CodeParams, RawExportQuery>({
  id: 'analytics.code_export',
  method: 'GET',
  path: '/v1/analytics/qr-codes/{code_ulid}/raw-export',
  summary: 'Raw scans of one QR code, paged in scan order (6 requests per minute)',
  description:
    'Rows in (scanned_at, scan_id) order; bots are left out unless include_bots=true (their rows have ' +
    'device_type "bot"). Page with offset, or for deep pages pass ' +
    'meta.next_cursor as cursor. Accept: text/csv returns the page as CSV with the paging meta in ' +
    'X-Has-More and X-Next-Cursor headers. Limited to 6 requests per minute on top of the organization limit.',
  tag: 'Analytics',
  ability: 'analytics.export',
  billable: true,
  bucket: 'raw_export',
  params: codeParams,
  query: rawExportQuery,
  response: {
    status: 200,
    description: 'One page of raw scans, or the page as CSV.',
    schema: dataEnvelope(RawExportPayload),
    csv: true,
    headers: {
      'X-Has-More': {
        description: 'With Accept: text/csv: meta.has_more of the page (`true` or `false`).',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
      'X-Next-Cursor': {
        description: 'With Accept: text/csv, when there is a next page: meta.next_cursor.',
        schema: { type: 'string' },
      },
    },
  },
  errors: [404, 422],
  handler: async ({ app, principal, accept }, { params, query }) => {
    const data = await rawExport(app, principal.org, params.code_ulid, query);
    if (wantsCsv(accept)) {
      const headers: Record<string, string> = { 'X-Has-More': String(data.meta.has_more) };
      if (data.meta.next_cursor) headers['X-Next-Cursor'] = data.meta.next_cursor;
      const csv = toCsv(data.rows, RAW_EXPORT_COLUMNS);
      return csvResult(`scans-${data.qr_code.ulid}-${query.range}d-${query.offset}.csv`, csv, headers);
    }
    return { status: 200, body: { data } };
  },
});

// GET /v1/analytics/qr-codes/{code_ulid}/conversions-export
export const analyticsCodeConversionsExport = defineOperation<CodeParams, ConversionsExportQuery>({
  id: 'analytics.code_conversions_export',
  method: 'GET',
  path: '/v1/analytics/qr-codes/{code_ulid}/conversions-export',
  summary: 'Conversions of one QR code, paged in the order they were recorded (6 requests per minute)',
  description:
    'The raw export’s companion for conversions (POST /v1/conversions): one row per conversion recorded in the ' +
    'range, in (created_at, ulid) order, with its scan’s scan_id, visitor_id and values. Page with offset. ' +
    'Accept: text/csv returns the page as CSV with meta.has_more in an X-Has-More header. Shares the raw ' +
    'export’s limit of 6 requests per minute on top of the organization limit.',
  tag: 'Analytics',
  ability: 'analytics.export',
  billable: true,
  bucket: 'raw_export',
  params: codeParams,
  query: conversionsExportQuery,
  response: {
    status: 200,
    description: 'One page of conversions, or the page as CSV.',
    schema: dataEnvelope(ConversionsExportPayload),
    csv: true,
    headers: {
      'X-Has-More': {
        description: 'With Accept: text/csv: meta.has_more of the page (`true` or `false`).',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
    },
  },
  errors: [404, 422],
  handler: async ({ app, principal, accept }, { params, query }) => {
    const data = await conversionsExport(app, principal.org, params.code_ulid, query);
    if (wantsCsv(accept)) {
      const csv = toCsv(data.rows, CONVERSION_EXPORT_COLUMNS);
      return csvResult(`conversions-${data.qr_code.ulid}-${query.range}d-${query.offset}.csv`, csv, {
        'X-Has-More': String(data.meta.has_more),
      });
    }
    return { status: 200, body: { data } };
  },
});

// GET /v1/scans/stream
export const scansStream = defineOperation<Record<string, never>, ScanStreamQuery>({
  id: 'scans.stream',
  method: 'GET',
  path: '/v1/scans/stream',
  summary: 'Live scans of the organization as Server-Sent Events (resumable with Last-Event-ID)',
  description:
    'Every scan the redirect records, as one `scan` event (the raw export fields plus code_ulid, slug, ' +
    'brand_ulid, brand_name, bot) within about a second, with id `<batch>-<scan_id>`. Reconnecting with ' +
    'Last-Event-ID replays the scans missed in the last 24 hours first (a `reset` event when the id is ' +
    'older). A `: heartbeat` comment every 15 s; a client that reads too slowly gets a `gap` event with ' +
    'the number of scans missed and raw export cursors. Concurrent streams per organization are limited ' +
    `by plan (429). ${BOTS_NOTE} See docs/stream.md.`,
  tag: 'Analytics',
  ability: 'analytics.view',
  billable: true,
  query: scanStreamQuery,
  response: {
    status: 200,
    description: 'An event stream (text/event-stream) of `scan`, `gap` and `reset` events.',
    media: { 'text/event-stream': { type: 'string' } },
  },
  errors: [404, 422],
  handler: async ({ app, principal, lastEventId }, { query }) => {
    const { stream, stopping } = await openScanStream(app, principal.org, query, lastEventId);
    const headers: Record<string, string> = { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' };
    if (stopping) headers.Connection = 'close';
    return { status: 200, contentType: 'text/event-stream', headers, body: stream };
  },
});

export const analyticsOperations = [
  analyticsRead,
  analyticsExport,
  analyticsCodeRead,
  analyticsCodeExport,
  analyticsCodeConversionsExport,
  scansStream,
];
