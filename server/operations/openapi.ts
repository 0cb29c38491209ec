// The OpenAPI 3.1 document, generated from the operations and their JSON Schemas: every schema
// with an $id becomes a component and is referred to by $ref.
import { documentFormOf, type JsonSchema } from '../schemas/validation.js';
import { ErrorBody, RateLimitedBody } from '../schemas/common.js';
import { takesIdempotencyKey } from './idempotency.js';
import { API_VERSION, readsBody, type Operation } from './operation.js';

type Doc = Record<string, unknown>;

const TAG_DESCRIPTIONS: Record<string, string> = {
  Status: 'Service status, plan and usage, and the organization of the token.',
  Wallet: 'The prepaid wallet: balance and ledger (read only; top-ups happen in the web UI).',
  Tokens: 'Personal access tokens of the authenticated user in this organization (not billable).',
  Analytics: 'Scan analytics from ClickHouse rollups, exports and the raw scan export.',
  Brands: 'Brands group codes, styles and a primary domain.',
  Domains: 'Shared fallback hosts and the organization’s custom domains with DNS verification.',
  'QR codes': 'Dynamic QR codes and their redirect configuration.',
  'Bulk import': 'Two-phase bulk creation of QR codes: stage, review, confirm.',
  'QR styles': 'Reusable style presets for the QR designer and render pipeline.',
  Webhooks: 'Signed event deliveries (Standard Webhooks) to the organization’s endpoints, with a delivery log.',
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request body (invalid_json, bad_request).',
  401: 'Missing, malformed, unknown, expired or revoked token (unauthenticated).',
  402: 'Included calls used up and the wallet cannot cover the call (insufficient_funds).',
  403: 'Ability missing (forbidden, with required_ability), api_access_disabled or feature_not_in_plan.',
  404: 'Not found (also for records of another organization).',
  409: 'The resource is in a state that forbids the action (conflict), or a call with the same Idempotency-Key is still running (idempotency_key_in_progress).',
  413: 'Request body too large (payload_too_large).',
  415: 'A request body that is not Content-Type: application/json (unsupported_media_type).',
  422: 'Validation failed (validation_failed, with errors per field; unknown body fields and unknown query parameters included), or the Idempotency-Key was used with another request (idempotency_key_reused).',
  429: 'Rate limit exceeded (rate_limited).',
  500: 'A bug (internal): the body carries the request_id to quote; never a stack trace.',
  503: 'Every render thread is busy and the render queue is full, or a render overran its time budget (service_unavailable); retry after Retry-After seconds when it is given.',
};

/**
 * Response headers, declared once as components. Rate-limit headers are certain on a success (the
 * call was admitted) and possible on an error (present once the call was admitted: not on 401 or
 * 403 api_access_disabled).
 */
const integer: JsonSchema = { type: 'integer', minimum: 0 };
const RESPONSE_HEADERS: Record<string, Doc> = {
  RequestId: {
    description: 'The request id (a sane incoming X-Request-Id is kept); quote it when reporting a problem.',
    required: true,
    schema: { type: 'string' },
  },
  RateLimitLimit: { description: 'Size of the organization’s one-minute window.', required: true, schema: integer },
  RateLimitRemaining: { description: 'Calls left in the current window.', required: true, schema: integer },
  RateLimitReset: {
    description: 'Unix time (seconds) when the window resets.',
    required: true,
    schema: integer,
  },
  RateLimitLimitIfAdmitted: {
    description: 'Size of the organization’s one-minute window; present once the call was admitted.',
    schema: integer,
  },
  RateLimitRemainingIfAdmitted: {
    description: 'Calls left in the current window; present once the call was admitted.',
    schema: integer,
  },
  RateLimitResetIfAdmitted: {
    description: 'Unix time (seconds) when the window resets; present once the call was admitted.',
    schema: integer,
  },
  RetryAfter: { description: 'Seconds until the window resets.', required: true, schema: integer },
  RenderRetryAfter: { description: 'Seconds after which the render queue is likely to have room.', schema: integer },
  RateLimitHelp: {
    description: 'The rate-limit help page: `<url>; rel="help"; type="text/html"`.',
    required: true,
    schema: { type: 'string' },
  },
  WwwAuthenticate: { description: 'Always `Bearer`.', required: true, schema: { type: 'string', const: 'Bearer' } },
  ContentTypeOptions: {
    description: 'Always `nosniff`: a browser takes the Content-Type as sent.',
    required: true,
    schema: { type: 'string', const: 'nosniff' },
  },
  SvgContentSecurityPolicy: {
    description:
      "On an SVG answer: `default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; sandbox`, so the " +
      'image opened as a document runs and fetches nothing.',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    description: '`true` when this is the stored answer to an earlier call with the same Idempotency-Key.',
    schema: { type: 'string', const: 'true' },
  },
  ContentDisposition: {
    description: 'With Accept: text/csv: `attachment; filename="..."`.',
    schema: { type: 'string' },
  },
};

const headerRef = (name: keyof typeof RESPONSE_HEADERS): Doc => ({ $ref: `#/components/headers/${name}` });

/** The headers of one response of an operation. */
function responseHeaders(op: Operation, status: number): Record<string, Doc> {
  const alternative = op.alternatives?.find((a) => a.status === status);
  const ok = status === op.response.status || alternative !== undefined;
  const out: Record<string, Doc> = {
    'X-Request-Id': headerRef('RequestId'),
    'X-Content-Type-Options': headerRef('ContentTypeOptions'),
  };
  if (status !== 401) {
    const suffix = ok || status === 429 || status === 402 ? '' : 'IfAdmitted';
    out['X-RateLimit-Limit'] = headerRef(`RateLimitLimit${suffix}`);
    out['X-RateLimit-Remaining'] = headerRef(`RateLimitRemaining${suffix}`);
    out['X-RateLimit-Reset'] = headerRef(`RateLimitReset${suffix}`);
  }
  if (status === 401) out['WWW-Authenticate'] = headerRef('WwwAuthenticate');
  if (status === 429) {
    out['Retry-After'] = headerRef('RetryAfter');
    out.Link = headerRef('RateLimitHelp');
  }
  if (status === 503) out['Retry-After'] = headerRef('RenderRetryAfter');
  if (takesIdempotencyKey(op.method) && status !== 401) out['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
  if (ok && op.response.csv) out['Content-Disposition'] = headerRef('ContentDisposition');
  if (ok && op.response.media?.['image/svg+xml'])
    out['Content-Security-Policy'] = headerRef('SvgContentSecurityPolicy');
  const own = alternative ? alternative.headers : ok ? op.response.headers : undefined;
  for (const [name, h] of Object.entries(own ?? {})) out[name] = { ...h };
  return out;
}

/** What every operation says about its query string. */
function queryNote(op: Operation): string {
  return op.query
    ? 'Query parameters other than the documented ones are refused with 422 validation_failed.'
    : 'Takes no query parameters: any is refused with 422 validation_failed.';
}

class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  /**
   * Replaces nested $id'd schemas by $refs, registering them as components. A schema with a
   * document form (withDocumentForm: a code's bodies, one schema per type under a discriminator)
   * is shown in that form.
   */
  ref(schema: JsonSchema): JsonSchema {
    if (typeof schema.$id === 'string') {
      const name = schema.$id.replace(/[^A-Za-z0-9._-]/g, '_');
      if (name !== schema.$id) throw new Error(`schema $id ${schema.$id} is not a component name`);
      if (!this.schemas[name]) {
        this.schemas[name] = {}; // placeholder against cycles
        const { $id: _drop, ...rest } = schema;
        const shown = documentFormOf(schema);
        this.schemas[name] = this.walk(shown ? { description: rest.description, ...shown } : rest);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    return this.walk(schema);
  }

  private walk(value: JsonSchema): JsonSchema {
    const out: JsonSchema = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'default' || k === 'enum' || k === 'const' || k === 'example' || k === 'required') out[k] = v;
      else if (Array.isArray(v)) out[k] = v.map((x) => (isSchema(x) ? this.ref(x) : x));
      else if (isSchema(v)) out[k] = this.ref(v);
      else out[k] = v;
    }
    return out;
  }
}

function isSchema(v: unknown): v is JsonSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function inlineObject(schema: JsonSchema | undefined): { properties: Record<string, JsonSchema>; required: string[] } {
  return {
    properties: (schema?.properties as Record<string, JsonSchema>) ?? {},
    required: (schema?.required as string[]) ?? [],
  };
}

export function buildOpenApi(ops: readonly Operation[], serverUrl: string): Doc {
  const components = new Components();
  const errorRef = components.ref(ErrorBody);
  const rateRef = components.ref(RateLimitedBody);
  const paths: Record<string, Record<string, Doc>> = {};
  for (const op of ops) {
    const parameters: Doc[] = [];
    for (const [where, schema] of [
      ['path', op.params],
      ['query', op.query],
    ] as const) {
      const { properties, required } = inlineObject(schema);
      for (const [name, prop] of Object.entries(properties)) {
        parameters.push({
          name,
          in: where,
          required: where === 'path' || required.includes(name),
          description: typeof prop.description === 'string' ? prop.description : undefined,
          schema: components.ref(prop),
        });
      }
    }
    const idempotent = takesIdempotencyKey(op.method);
    if (idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Up to 255 visible ASCII characters. The first answer is kept 24 hours per organization and key; a retry of the same request gets it again with Idempotent-Replayed: true and is not metered.',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
    }
    const responses: Record<string, Doc> = {};
    const ok: Doc = { description: op.response.description, headers: responseHeaders(op, op.response.status) };
    if (op.response.media) {
      ok.content = Object.fromEntries(
        Object.entries(op.response.media).map(([type, schema]) => [type, { schema: components.ref(schema) }]),
      );
    } else if (op.response.schema) {
      const content: Doc = { 'application/json': { schema: components.ref(op.response.schema) } };
      if (op.response.csv) content['text/csv'] = { schema: { type: 'string' } };
      ok.content = content;
    }
    responses[String(op.response.status)] = ok;
    for (const alt of op.alternatives ?? []) {
      responses[String(alt.status)] = { description: alt.description, headers: responseHeaders(op, alt.status) };
    }
    const statuses = new Set([
      401,
      403,
      422,
      429,
      500,
      ...(readsBody(op.method) ? [400, 413, 415] : []),
      ...(op.errors ?? []),
      ...(idempotent ? [409] : []),
      ...(op.billable ? [402] : []),
    ]);
    for (const s of [...statuses].sort()) {
      responses[String(s)] = {
        description: STATUS_TEXT[s] ?? 'Error.',
        headers: responseHeaders(op, s),
        content: { 'application/json': { schema: s === 429 ? rateRef : errorRef } },
      };
    }
    const operation: Doc = {
      operationId: op.id,
      summary: op.summary,
      description: [op.description, queryNote(op)].filter(Boolean).join(' '),
      tags: [op.tag],
      'x-ability': op.ability ?? 'any valid token',
      'x-billable': op.billable,
      ...(parameters.length ? { parameters } : {}),
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: components.ref(op.body) } } } }
        : {}),
      responses,
    };
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operation;
  }
  const tags = [...new Set(ops.map((o) => o.tag))].map((name) => ({
    name,
    description: TAG_DESCRIPTIONS[name] ?? name,
  }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'QR code service API',
      version: API_VERSION,
      description: 'Organization-scoped dynamic QR codes. Every call sends Authorization: Bearer <token>.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // x-internal: false says the API is meant for customers (OWASP API9, inventory).
    servers: [{ url: serverUrl, 'x-internal': false }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    components: {
      schemas: components.schemas,
      headers: RESPONSE_HEADERS,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Token `<id>|<secret>`.' } },
    },
  };
}
