// OWASP API4 (unrestricted resource consumption): every string a request can carry has a
// maxLength (or is one of a fixed set), every integer a minimum and a maximum, every array a
// maxItems, in the one schema source, so ajv, the OpenAPI document and the MCP inputSchema agree;
// a value over a limit is a 422 naming the limit.
import { expect } from 'chai';
import { dashboardOnlyOperations, mcpOnlyOperations, operations } from '../../server/all-operations.js';
import { ApiError } from '../../server/errors.js';
import { buildTools } from '../../server/mcp/tools.js';
import { createCodeBody } from '../../server/qr-codes/schema.js';
import { fieldLimits } from '../../server/schemas/limits.js';
import { Validators, type JsonSchema } from '../../server/schemas/validation.js';

const ops = [...operations, ...dashboardOnlyOperations, ...mcpOnlyOperations];

function unbounded(schema: JsonSchema | undefined, where: string): string[] {
  return fieldLimits(schema)
    .filter((f) => !f.bounded)
    .map((f) => `${where} ${f.field}`);
}

describe('request schema limits', () => {
  it('bounds every string, integer and array of every operation’s params, query and body', () => {
    const found = ops.flatMap((op) =>
      (['params', 'query', 'body'] as const).flatMap((p) => unbounded(op[p], `${op.id} ${p}`)),
    );
    expect(found).to.deep.equal([]);
  });

  it('bounds every string, integer and array of every MCP tool’s inputSchema', () => {
    const { tools } = buildTools(ops);
    expect(tools.length).to.be.greaterThan(10);
    expect(tools.flatMap((t) => unbounded(t.inputSchema, t.def.name))).to.deep.equal([]);
  });

  it('gives the MCP tool the same limit as the REST body it runs', () => {
    const tool = buildTools(ops).tools.find((t) => t.def.name === 'codes_create')!;
    const limit = (s: JsonSchema | undefined, field: string) => fieldLimits(s).find((f) => f.field === field)?.limit;
    for (const field of ['name', 'slug', 'password', 'prelander_message', 'routing.rules', 'utm_params.*']) {
      expect(limit(tool.inputSchema, field), field).to.equal(limit(createCodeBody, field)).and.not.equal(undefined);
    }
  });

  it('refuses a value over its limit with a 422 that names the limit', () => {
    const v = new Validators();
    const body = {
      slug: 'a'.repeat(65),
      destination: 'https://example.com/',
      domain_ulid: '0'.repeat(27),
      name: 'n'.repeat(256),
      routing: { rules: Array.from({ length: 51 }, () => ({ conditions: {} })) },
    };
    try {
      v.check(createCodeBody, 'body', body);
      expect.fail('accepted');
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      const e = err as ApiError;
      expect(e.status).to.equal(422);
      // The messages are the validation layer's; each names the limit it met.
      const errors = e.body().errors as Record<string, string[]>;
      expect(errors.name.join(' ')).to.match(/\b255\b/);
      expect(errors.slug.join(' ')).to.match(/\b64\b/);
      expect(errors.domain_ulid.join(' ')).to.match(/\b26\b/);
      expect(errors['routing.rules'].join(' ')).to.match(/\b50\b/);
    }
  });
});
