// A tool's inputSchema, generated from its operation's params, query and body schemas, and the
// split of a tools/call's arguments back into those three parts.
import { ApiError } from '../errors.js';
import type { RawInput } from '../operations/execute.js';
import { takesIdempotencyKey } from '../operations/idempotency.js';
import type { Operation } from '../operations/operation.js';
import { notAllowedMessage, type JsonSchema } from '../schemas/validation.js';
import type { ToolDef } from './catalog.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keywords whose value is data, not a schema. */
const LITERALS = new Set(['enum', 'const', 'default', 'examples', 'required', 'description', 'title']);
/** Keywords whose value maps names to schemas (a property may be called `type` or `enum`). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/** Keywords that apply to one JSON type only, for splitting a multi-typed schema into branches. */
const KEYWORDS_OF_TYPE: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format', 'contentEncoding', 'contentMediaType'],
  object: [
    'properties',
    'required',
    'additionalProperties',
    'patternProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
  ],
  array: ['items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems', 'contains'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
};

/**
 * A schema with `type: [a, b]` as `anyOf` branches of one type each, every type-specific keyword
 * moved into its branch: what clients that allow one type per schema read.
 */
function splitTypes(schema: Record<string, unknown>, types: string[]): Record<string, unknown> {
  const specific = new Set(Object.values(KEYWORDS_OF_TYPE).flat());
  const shared: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) if (k !== 'type' && !specific.has(k)) shared[k] = v;
  if ('anyOf' in shared) throw new Error('a multi-typed schema with its own anyOf cannot be split');
  const anyOf = types.map((t) => {
    const branch: Record<string, unknown> = { type: t };
    for (const k of KEYWORDS_OF_TYPE[t] ?? []) if (k in schema) branch[k] = schema[k];
    return branch;
  });
  return { ...shared, anyOf };
}

/**
 * What a tool's schema says about a JSON Schema of ours. Both kinds give every schema one `type`:
 * function-calling formats that allow one type per field reject `type: [...]`.
 * - input: a nullable field (`[T, "null"]`) is offered as T; a caller omits the key instead of
 *   sending null (the operation still accepts null where REST does).
 * - output: the result may hold null, so `[T, "null"]` becomes anyOf branches of one type each.
 */
type ToolSchemaKind = 'input' | 'output';

/**
 * A copy fit for a tool's inputSchema or outputSchema: no $id (tools are compiled side by side by
 * clients), `x-mcp` replaced by the schema it carries, no vendor extensions, OpenAPI's `example`
 * as JSON Schema `examples`, and one type per schema (ToolSchemaKind).
 */
function toToolSchema(value: unknown, kind: ToolSchemaKind = 'input'): unknown {
  if (Array.isArray(value)) return value.map((v) => toToolSchema(v, kind));
  if (!isObject(value)) return value;
  if (isObject(value['x-mcp'])) return toToolSchema(value['x-mcp'], kind);
  let out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    // $id, $schema and vendor extensions (x-mcp, x-pattern-message) are for this service's own use.
    if (k === '$id' || k === '$schema' || k.startsWith('x-')) continue;
    if (k === 'example') {
      if (!('examples' in value)) out.examples = [v];
      continue;
    }
    if (LITERALS.has(k)) out[k] = v;
    else if (SCHEMA_MAPS.has(k) && isObject(v)) {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, toToolSchema(sub, kind)]));
    } else out[k] = toToolSchema(v, kind);
  }
  if (Array.isArray(out.type)) {
    const types = out.type as string[];
    const solid = types.filter((t) => t !== 'null');
    if (kind === 'input') {
      if (solid.length !== 1) throw new Error(`a tool input needs one type, not ${types.join(' or ')}: override it`);
      out.type = solid[0];
      if (Array.isArray(out.enum)) out.enum = out.enum.filter((e) => e !== null);
    } else {
      out = splitTypes(out, types);
    }
  }
  return out;
}

interface Flat {
  properties: Record<string, JsonSchema>;
  required: string[];
}

/** Properties and required names of an object schema, following allOf. */
function flatten(schema: JsonSchema, where: string): Flat {
  const out: Flat = { properties: {}, required: [] };
  if (isObject(schema.properties)) Object.assign(out.properties, schema.properties);
  if (Array.isArray(schema.required)) out.required.push(...(schema.required as string[]));
  if (Array.isArray(schema.allOf)) {
    for (const part of schema.allOf as JsonSchema[]) {
      const f = flatten(part, where);
      Object.assign(out.properties, f.properties);
      out.required.push(...f.required);
    }
  }
  if (!Object.keys(out.properties).length && (schema.oneOf || schema.anyOf)) {
    throw new Error(`${where}: a tool input must be an object schema with properties`);
  }
  return out;
}

function partsOf(op: Operation): { part: 'params' | 'query' | 'body'; schema: JsonSchema }[] {
  const parts: { part: 'params' | 'query' | 'body'; schema: JsonSchema }[] = [];
  if (op.params) parts.push({ part: 'params', schema: op.params });
  if (op.query) parts.push({ part: 'query', schema: op.query });
  if (op.body) parts.push({ part: 'body', schema: op.body });
  return parts;
}

/** The tool argument that carries an idempotency key (REST: the Idempotency-Key header). */
export const IDEMPOTENCY_ARG = 'idempotency_key';

const idempotencyKeyArg: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x21-\\x7e]+$',
  description:
    'Optional. A retry with the same key and arguments within 24 hours returns the first answer instead of running again (and is not billed).',
};

export function buildInputSchema(def: ToolDef, op: Operation): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required = new Set<string>();
  for (const { part, schema } of partsOf(op)) {
    const flat = flatten(schema, `${def.name} ${part}`);
    for (const [name, prop] of Object.entries(flat.properties)) {
      if (name in properties) throw new Error(`${def.name}: input ${name} appears in two parts of ${op.id}`);
      properties[name] = toToolSchema(def.inputOverrides?.[name] ?? prop, 'input');
    }
    flat.required.forEach((r) => required.add(r));
  }
  if (takesIdempotencyKey(op.method)) properties[IDEMPOTENCY_ARG] = idempotencyKeyArg;
  if (def.guard) {
    properties.confirm = { type: 'boolean', description: 'true executes a previewed call; needs confirmation_id.' };
    properties.confirmation_id = {
      type: 'string',
      maxLength: 100,
      description: 'The confirmation_id returned by the preview call.',
    };
  }
  const out: JsonSchema = { type: 'object', properties, required: [...required], additionalProperties: false };
  // Conditions between inputs (a code's destination schema per type) stay conditions of the tool's input.
  const conditions = partsOf(op).flatMap(({ schema }) =>
    Array.isArray(schema.allOf) ? (schema.allOf as JsonSchema[]).filter((c) => c.if !== undefined) : [],
  );
  if (conditions.length) out.allOf = toToolSchema(conditions, 'input') as JsonSchema[];
  return out;
}

/** What a guarded tool answers first: the preview of confirm-then-execute (confirm.ts). */
const previewOutput: JsonSchema = {
  type: 'object',
  required: ['requires_confirmation', 'confirmation_id', 'expires_at', 'preview'],
  additionalProperties: false,
  properties: {
    requires_confirmation: { type: 'boolean', const: true },
    confirmation_id: { type: 'string' },
    expires_at: { type: 'string', description: 'When the confirmation_id expires (ISO 8601).' },
    preview: { type: 'object', description: 'What the confirmed call would do.' },
  },
};

/**
 * The tool's outputSchema: the tool's own (ToolDef.outputSchema) or its operation's success
 * payload; a guarded tool answers either its preview or that. MCP wants an object at the root, so
 * a tool without one is a programming error, caught when the catalog is built.
 */
export function buildOutputSchema(def: ToolDef, op: Operation): JsonSchema {
  const result = toToolSchema(def.outputSchema ?? op.response.schema, 'output') as JsonSchema | undefined;
  if (result?.type !== 'object')
    throw new Error(`${def.name}: the result of ${op.id} is not described by an object schema`);
  return def.guard ? { type: 'object', anyOf: [previewOutput, result] } : result;
}

/** Splits tool arguments into the operation's params, query and body; unknown names are 422. */
export function splitArguments(op: Operation, args: Record<string, unknown>): RawInput {
  const names = (schema: JsonSchema | undefined) =>
    new Set(schema ? Object.keys(flatten(schema, op.id).properties) : []);
  const paramNames = names(op.params);
  const queryNames = names(op.query);
  // Entries, then Object.fromEntries: a "__proto__" argument stays an own (and refused) key.
  const params: [string, unknown][] = [];
  const query: [string, unknown][] = [];
  const body: [string, unknown][] = [];
  const unknown: [string, string[]][] = [];
  const notAllowed = notAllowedMessage([...paramNames, ...queryNames]);
  for (const [k, v] of Object.entries(args)) {
    if (paramNames.has(k)) params.push([k, v]);
    else if (queryNames.has(k)) query.push([k, v]);
    else if (op.body) body.push([k, v]);
    else unknown.push([k, [notAllowed]]);
  }
  if (unknown.length) throw ApiError.validation(Object.fromEntries(unknown));
  // Path parameters are always required, as they are in the URL.
  const given = new Set(params.map(([k]) => k));
  for (const p of paramNames) {
    if (!given.has(p)) throw ApiError.field(p, 'This field is required.');
  }
  return {
    params: Object.fromEntries(params),
    query: Object.fromEntries(query),
    body: op.body ? Object.fromEntries(body) : undefined,
  };
}
