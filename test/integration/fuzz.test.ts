// Random JSON against every POST and PATCH operation: never a 5xx, and a 4xx changes nothing.
import { expect } from 'chai';
import fc from 'fast-check';
import type { Operation } from '../../server/operations/operation.js';
import { operations } from '../../server/all-operations.js';
import type { JsonSchema } from '../../server/schemas/validation.js';
import { startTestService, type TestService } from '../helpers/harness.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

// Tables whose rows a request may touch; metering tables and token last_used_at are left out
// (an admitted 4xx is still a counted call).
const TENANT_TABLES = [
  'organizations',
  'users',
  'memberships',
  'domains',
  'brands',
  'qr_styles',
  'qr_codes',
  'bulk_imports',
  'bulk_import_rows',
];

function valueFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  if (!schema) return fc.jsonValue();
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const types = ([] as string[]).concat((schema.type as string | string[] | undefined) ?? []);
  const arbs: fc.Arbitrary<unknown>[] = [];
  for (const t of types) {
    if (t === 'string') {
      arbs.push(
        schema.format === 'uri' || /url|destination/i.test(String(schema.description ?? ''))
          ? fc.oneof(fc.webUrl(), fc.string())
          : schema.format === 'date-time'
            ? fc.oneof(
                fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
                fc.string(),
              )
            : fc.oneof(fc.string({ maxLength: 80 }), fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/)),
      );
    } else if (t === 'integer' || t === 'number') arbs.push(fc.oneof(fc.integer(), fc.double()));
    else if (t === 'boolean') arbs.push(fc.boolean());
    else if (t === 'null') arbs.push(fc.constant(null));
    else if (t === 'array') arbs.push(fc.array(valueFor(schema.items as JsonSchema | undefined), { maxLength: 4 }));
    else if (t === 'object') arbs.push(bodyFor(schema, 1));
  }
  arbs.push(fc.jsonValue({ maxDepth: 2 }));
  return fc.oneof(...arbs);
}

function bodyFor(schema: JsonSchema | undefined, depth = 0): fc.Arbitrary<unknown> {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const names = Object.keys(props);
  if (!names.length || depth > 1)
    return fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
  const model = fc.record(Object.fromEntries(names.map((n) => [n, valueFor(props[n])])), { requiredKeys: [] });
  return fc.oneof(
    { weight: 6, arbitrary: model },
    {
      weight: 1,
      arbitrary: model.chain((m) => fc.record({ junk: fc.jsonValue() }).map((j) => ({ ...(m as object), ...j }))),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

/** Keys a JavaScript object inherits: code that reads them from parsed JSON meets its own value. */
const PROTOTYPE_KEYS = ['toString', 'valueOf', 'constructor', 'hasOwnProperty', '__proto__', 'toJSON'];

/**
 * Bodies with those keys, holding values that are not functions: at the top level and in every
 * object or array-of-objects property of the schema, one level down; two array items that differ
 * only there (ajv's uniqueItems compared such items with their own toString once, and threw).
 */
function prototypeKeyBodies(schema: JsonSchema | undefined): unknown[] {
  const odd = (key: string): Record<string, unknown> => JSON.parse(`{${JSON.stringify(key)}: false}`);
  const bodies: unknown[] = PROTOTYPE_KEYS.map(odd);
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, prop] of Object.entries(props)) {
    const types = ([] as string[]).concat((prop.type as string | string[] | undefined) ?? []);
    for (const key of PROTOTYPE_KEYS) {
      if (types.includes('object')) bodies.push({ [name]: odd(key) });
      if (types.includes('array')) bodies.push({ [name]: [{}, odd(key)] }, { [name]: [odd(key), odd(key)] });
    }
  }
  return bodies;
}

describe('fuzzing every POST and PATCH with random JSON', function () {
  this.timeout(300_000);
  let svc: TestService;
  let token: string;
  let orgId: number;
  const ulids: Record<string, string> = {};

  before(async () => {
    svc = await startTestService({ config: { platformRateLimitPerMin: 1_000_000 } });
    const created = await svc.createOrg({ plan: 'enterprise_monthly' });
    token = created.token;
    orgId = created.org.id;
    // Fixtures so PATCH and confirm reach their validation with a real record in the path.
    const fallback = (await svc.get('/v1/domains', token)).body?.data?.[0]?.ulid;
    const tries: [string, string, unknown][] = [
      ['brand_ulid', '/v1/brands', { name: 'Fuzz brand' }],
      ['domain_ulid', '/v1/domains', { host: 'fuzz-target.example.com' }],
      ['style_ulid', '/v1/qr-styles', { name: 'Fuzz style', config: {} }],
      ['code_ulid', '/v1/qr-codes', { slug: 'fuzz-code', destination: 'https://example.com/', domain_ulid: fallback }],
      [
        'import_ulid',
        '/v1/qr-codes/bulk',
        { rows: [{ slug: 'bulk-fuzz', destination: 'https://example.com/' }], defaults: { domain_ulid: fallback } },
      ],
    ];
    for (const [key, path, body] of tries) {
      const res = await svc.post(path, token, body);
      if (res.status === 201) ulids[key] = res.body.data.ulid;
    }
  });
  after(() => svc.close());

  async function snapshot(): Promise<string> {
    const parts: string[] = [];
    for (const table of TENANT_TABLES) {
      const { rows } = await svc.app.db.raw(
        `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${table} t`,
      );
      parts.push(`${table}:${rows[0].h}`);
    }
    const tokens = await svc.app.db.raw(
      `select md5(coalesce(string_agg((id, name, abilities, expires_at, revoked_at)::text, '|' order by id), '')) as h from api_tokens where org_id = ?`,
      [orgId],
    );
    parts.push(`api_tokens:${tokens.rows[0].h}`);
    return parts.join(',');
  }

  function concretePath(op: Operation, pick: (key: string) => string): string {
    return op.path.replace(/\{([a-z_]+)\}/g, (_m, key: string) => encodeURIComponent(pick(key)));
  }

  const targets = operations.filter((op) => op.method === 'POST' || op.method === 'PATCH' || op.method === 'PUT');

  it('covers every POST and PATCH operation', () => {
    expect(targets.length).to.be.greaterThan(5);
  });

  for (const op of targets) {
    it(`${op.method} ${op.path}: keys named like Object.prototype's members: never 5xx, and a 4xx changes nothing`, async () => {
      const path = concretePath(op, (name) => ulids[name] ?? 'missing');
      for (const body of prototypeKeyBodies(op.body)) {
        const before = await snapshot();
        const res = await svc.request(op.method, path, { token, body });
        // A free-form object (a brand kit) may hold such a key: that is a 2xx.
        expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.be.below(500);
        if (res.status >= 400) expect(await snapshot(), `${res.status} ${res.text}`).to.equal(before);
      }
    });

    it(`${op.method} ${op.path}: never 5xx, and a 4xx changes nothing`, async () => {
      const pathKey = fc.oneof(
        { weight: 3, arbitrary: fc.constant('__fixture__') },
        // '.' and '..' are dot segments: a client resolves them away (RFC 3986), so the request
        // names another path, not this operation with an odd key.
        { weight: 1, arbitrary: fc.string({ maxLength: 30 }).filter((s) => s !== '.' && s !== '..') },
        { weight: 1, arbitrary: fc.constant('01ARZ3NDEKTSV4RRFFQ69G5FAV') },
      );
      await fc.assert(
        fc.asyncProperty(bodyFor(op.body), pathKey, fc.boolean(), async (body, key, raw) => {
          const path = concretePath(op, (name) => (key === '__fixture__' ? (ulids[name] ?? 'missing') : key));
          const before = await snapshot();
          const res = raw
            ? await svc.request(op.method, path, { token, rawBody: JSON.stringify(body).slice(0, -1) || '{' })
            : await svc.request(op.method, path, { token, body });
          if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(body)}: ${res.text}`);
          if (res.status >= 400) {
            expect(await snapshot(), `${res.status} ${res.text}`).to.equal(before);
          }
        }),
        { numRuns: RUNS },
      );
    });
  }
});
