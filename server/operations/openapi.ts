// The OpenAPI 3.1 document, generated from the operations and their JSON Schemas: every schema
// with an $id becomes a component and is referred to by $ref.
import type { JsonSchema } from '../schemas/validation.js';
import { ErrorBody, RateLimitedBody } from '../schemas/common.js';
import { takesIdempotencyKey } from './idempotency.js';
import { API_VERSION, type Operation } from './operation.js';

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
};

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request (invalid_json).',
  401: 'Missing, malformed, unknown, expired or revoked token.',
  402: 'Included calls used up and the wallet cannot cover the call (insufficient_funds).',
  403: 'Ability missing (forbidden, with required_ability), api_access_disabled or feature_not_in_plan.',
  404: 'Not found (also for records of another organization).',
  409: 'The resource is in a state that forbids the action (conflict), or a call with the same Idempotency-Key is still running (idempotency_key_in_progress).',
  413: 'Request body too large.',
  422: 'Validation failed (validation_failed, with errors per field), or the Idempotency-Key was used with another request (idempotency_key_reused).',
  429: 'Rate limit exceeded.',
};

class Components {
  readonly schemas: Record<string, JsonSchema> = {};

  /** Replaces nested $id'd schemas by $refs, registering them as components. */
  ref(schema: JsonSchema): JsonSchema {
    if (typeof schema.$id === 'string') {
      const name = schema.$id.replace(/[^A-Za-z0-9._-]/g, '_');
      if (!this.schemas[name]) {
        this.schemas[name] = {}; // placeholder against cycles
        const { $id: _drop, ...rest } = schema;
        this.schemas[name] = this.walk(rest);
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
    const ok: Doc = { description: op.response.description };
    if (op.response.schema) {
      const content: Doc = { 'application/json': { schema: components.ref(op.response.schema) } };
      if (op.response.csv) content['text/csv'] = { schema: { type: 'string' } };
      ok.content = content;
    }
    responses[String(op.response.status)] = ok;
    const statuses = new Set([
      401,
      403,
      429,
      ...(op.body ? [400, 413, 422] : []),
      ...(op.query || op.params ? [422] : []),
      ...(op.errors ?? []),
      ...(idempotent ? [409, 422] : []),
    ]);
    if (op.billable) statuses.add(402);
    for (const s of [...statuses].sort()) {
      responses[String(s)] = {
        description: STATUS_TEXT[s] ?? 'Error.',
        content: { 'application/json': { schema: s === 429 ? rateRef : errorRef } },
        ...(s === 429
          ? {
              headers: {
                'Retry-After': { schema: { type: 'integer' }, description: 'Seconds until the window resets.' },
                Link: { schema: { type: 'string' }, description: 'Rate-limit help page, rel=help, type text/html.' },
              },
            }
          : {}),
      };
    }
    const operation: Doc = {
      operationId: op.id,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
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
    servers: [{ url: serverUrl }],
    security: [{ bearerAuth: [] }],
    tags,
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Token `<id>|<secret>`.' } },
    },
  };
}
